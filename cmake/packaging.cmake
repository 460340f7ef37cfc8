# Installation layout and the Debian packages.
#
#   cmake --install build --prefix /usr/local      # a plain install (DESTDIR works too)
#   (cd build && cpack -G DEB)                       # tusk-agent_<v>_<arch>.deb, tusk-controller_<v>_<arch>.deb
#
# Two components, one package each:
#   agent       tusk-agent, its systemd unit, an example config
#   controller  tusk-controller, the shipped profiles and models, the Grafana dashboard, the
#               Prometheus scrape config and make-certs.sh, all under share/tusk
# Anything else installed with COMPONENT agent or controller (man pages, shell completions) lands
# in the matching package. Nothing is installed under /etc: tusk-agent.service has
# ConditionPathExists=/etc/tusk/agent.yaml, so the unit stays idle until the admin writes one, and
# the packages never enable or start it: tusk-agent's one maintainer script, its postinst, only
# makes the unit's user _tusk (deploy/debian/agent/postinst).
include(GNUInstallDirs)

# --- agent -----------------------------------------------------------------------------------------
install(TARGETS tusk-agent RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT agent)
# lib/systemd/system under the prefix (not LIBDIR, which may be multiarch): /usr/lib/systemd/system
# in the package; /usr/local/lib/systemd/system is on systemd's search path too.
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/tusk-agent.service
        DESTINATION lib/systemd/system COMPONENT agent)
# The example config is the lead's deploy/config/agent.yaml; a tree without it still packages.
if(EXISTS ${PROJECT_SOURCE_DIR}/deploy/config/agent.yaml)
  install(FILES ${PROJECT_SOURCE_DIR}/deploy/config/agent.yaml
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/tusk-agent/examples COMPONENT agent)
endif()

# --- controller ------------------------------------------------------------------------------------
set(TUSK_DATADIR ${CMAKE_INSTALL_DATADIR}/tusk)
install(TARGETS tusk-controller RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT controller)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/profiles ${PROJECT_SOURCE_DIR}/models
        DESTINATION ${TUSK_DATADIR} COMPONENT controller FILES_MATCHING PATTERN "*.yaml")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/deploy/grafana ${PROJECT_SOURCE_DIR}/deploy/prometheus
                  ${PROJECT_SOURCE_DIR}/deploy/topology
        DESTINATION ${TUSK_DATADIR} COMPONENT controller)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/make-certs.sh DESTINATION ${TUSK_DATADIR} COMPONENT controller)

# --- CPack: one .deb per component -----------------------------------------------------------------
set(TUSK_PACKAGE_MAINTAINER "Tusk maintainers <tusk-maintainers@example.org>"
    CACHE STRING "Maintainer field of the Debian packages")

set(CPACK_PACKAGE_NAME tusk)
set(CPACK_PACKAGE_VENDOR "Tusk")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${TUSK_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
set(CPACK_COMPONENTS_ALL agent controller)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${TUSK_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
# Depends from the binaries' shared libraries (dpkg-shlibdeps, from dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)

set(CPACK_DEBIAN_AGENT_PACKAGE_NAME tusk-agent)
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/deploy/debian/agent/postinst
                                              ${PROJECT_SOURCE_DIR}/deploy/debian/agent/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_NAME tusk-controller)
# A description's first line is the package's summary; string(CONCAT) keeps it one string.
string(CONCAT CPACK_COMPONENT_AGENT_DESCRIPTION
       "Tusk traffic generator agent\n"
       "Runs on each host under test and sends and checks the traffic the controller\n"
       "plans: RDMA (verbs, RoCE/InfiniBand) and Ethernet/IP frames through DPDK\n"
       "(af_packet or a PCI NIC). Includes a systemd unit that stays idle until\n"
       "/etc/tusk/agent.yaml exists; the package does not enable it.")
string(CONCAT CPACK_COMPONENT_CONTROLLER_DESCRIPTION
       "Tusk traffic generator controller\n"
       "Plans burn-in and training-traffic tests from YAML profiles, drives the\n"
       "tusk-agents over mutually authenticated TLS, and writes verdicts, reports and\n"
       "Prometheus metrics. Ships the example profiles and models, a Grafana dashboard\n"
       "and a certificate helper in /usr/share/tusk.")

# ethtool reads the tested ports' optics and FEC counters, lldpd their LLDP neighbours (the
# cabling check); without them the agent says so in its notes, and tests run.
set(tusk_agent_tools "ethtool, lldpd")
# adduser for the postinst. dpkg-shlibdeps sees only what tusk-agent links. DPDK loads its drivers as plugins from its PMD
# directory at start-up, and libibverbs loads its providers the same way; without them the agent
# starts but finds no ports: the mempool ring driver (every mbuf pool), the vdev bus and af_packet
# PMD (--dpdk-vdev net_af_packet...), and the verbs providers (rxe, mlx5, ...). The PCI bus and
# the mlx5 PMD (--dpdk-pci on a bifurcated ConnectX) are recommended. The ABI suffix follows the
# DPDK the agent was built against (librte_eal.so.<abi>).
set(TUSK_DPDK_ABI "")
pkg_get_variable(_tusk_dpdk_libdir libdpdk libdir)
if(_tusk_dpdk_libdir)
  file(GLOB _tusk_eal_sonames "${_tusk_dpdk_libdir}/librte_eal.so.*")
  foreach(_soname IN LISTS _tusk_eal_sonames)
    if(_soname MATCHES "librte_eal\\.so\\.([0-9]+)$")
      set(TUSK_DPDK_ABI ${CMAKE_MATCH_1})
    endif()
  endforeach()
endif()
if(TUSK_DPDK_ABI)
  # Debian names a library package after its soname, with a dash before the ABI when the
  # library's name ends in a digit (librte-net-mlx5-23).
  set(CPACK_DEBIAN_AGENT_PACKAGE_DEPENDS
      "adduser, librte-mempool-ring${TUSK_DPDK_ABI}, librte-bus-vdev${TUSK_DPDK_ABI}, librte-net-af-packet${TUSK_DPDK_ABI}, ibverbs-providers")
  set(CPACK_DEBIAN_AGENT_PACKAGE_RECOMMENDS
      "librte-bus-pci${TUSK_DPDK_ABI}, librte-net-mlx5-${TUSK_DPDK_ABI}, ${tusk_agent_tools}")
else()
  message(STATUS "packaging: DPDK's ABI not found; tusk-agent's package will not name the DPDK drivers")
  set(CPACK_DEBIAN_AGENT_PACKAGE_DEPENDS "adduser, ibverbs-providers")
  set(CPACK_DEBIAN_AGENT_PACKAGE_RECOMMENDS "${tusk_agent_tools}")
endif()
set(CPACK_DEBIAN_AGENT_PACKAGE_SUGGESTS "tusk-controller, rdma-core")
# make-certs.sh runs openssl.
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_RECOMMENDS "openssl")
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_SUGGESTS "tusk-agent")

include(CPack)