# The Ethernet side's NIC counters (ethtool -S): the ioctl reader against the running kernel (a veth
# pair in a namespace of its own when run as root), the name table, the netdev discovery on a fake
# sysfs tree.
tusk_add_test(ethtool_test
  SOURCES agent/ethtool_counter_names_test.cpp agent/netdev_counters_test.cpp agent/ethtool_stats_test.cpp
  LIBS tusk_agent_lib
  LABELS unit)
