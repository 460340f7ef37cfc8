# The Ethernet side's NIC counters (ethtool -S): the ioctl reader against the running kernel (a veth
# pair in a namespace of its own when run as root), the name table, the netdev discovery on a fake
# sysfs tree; and the thresholds that judge them.
tusk_add_test(ethtool_test
  SOURCES agent/rdma/counters/ethtool_counter_names_test.cpp agent/rdma/counters/netdev_counters_test.cpp agent/rdma/counters/ethtool_stats_test.cpp
  LIBS tusk_agent_lib
  LABELS unit)

tusk_add_test(nic_ethtool_thresholds_test
  SOURCES controller/verdict/nic_ethtool_thresholds_test.cpp
  LIBS tusk_controller_lib
  LABELS unit)
