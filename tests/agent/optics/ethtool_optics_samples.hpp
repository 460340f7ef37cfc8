// ethtool's output for the optics parsers' tests (optics_parser_test.cpp), shaped as ethtool's source
// prints it: the text with sff-common.c's and cmis.c's "\t%-41s : %s" lines and its number formats
// ("%.3f mA", "%.4f mW / %.2f dBm", "%.2f degrees C / %.2f degrees F", "%.4f V"); the JSON as the
// module-info JSON series (module-common.c, sfpdiag.c, qsfp.c, cmis.c) and netlink/fec.c write it.
// Data, not code: the 600-line limit does not hold here.
#pragma once

#include <string_view>

namespace tusk::testing {

// ethtool 6.1 `ethtool -m` of an SFP+ 10GBASE-SR (SFF-8079 and SFF-8472), netlink path: sfpid.c and
// sfpdiag.c; the module latched its temperature high warning.
inline constexpr std::string_view kSfpText = R"ethtool(	Identifier                                : 0x03 (SFP)
	Extended identifier                       : 0x04 (GBIC/SFP defined by 2-wire interface ID)
	Connector                                 : 0x07 (LC)
	Transceiver codes                         : 0x10 0x00 0x00 0x01 0x00 0x00 0x00 0x00 0x00
	Transceiver type                          : 10G Ethernet: 10G Base-SR
	Transceiver type                          : Ethernet: 1000BASE-SX
	Encoding                                  : 0x06 (64B/66B)
	BR, Nominal                               : 10300MBd
	Rate identifier                           : 0x00 (unspecified)
	Length (SMF,km)                           : 0km
	Length (SMF)                              : 0m
	Length (50um)                             : 80m
	Length (62.5um)                           : 30m
	Length (Copper)                           : 0m
	Length (OM3)                              : 300m
	Laser wavelength                          : 850nm
	Vendor name                               : FINISAR CORP.
	Vendor OUI                                : 00:90:65
	Vendor PN                                 : FTLX8574D3BCL
	Vendor rev                                : A
	Option values                             : 0x00 0x1a
	Option                                    : RX_LOS implemented
	Option                                    : TX_FAULT implemented
	Option                                    : TX_DISABLE implemented
	BR margin, max                            : 0%
	BR margin, min                            : 0%
	Vendor SN                                 : AQG0N4R
	Date code                                 : 140818
	Optical diagnostics support               : Yes
	Laser bias current                        : 7.862 mA
	Laser output power                        : 0.5871 mW / -2.31 dBm
	Receiver signal average optical power     : 0.4957 mW / -3.05 dBm
	Module temperature                        : 32.46 degrees C / 90.43 degrees F
	Module voltage                            : 3.3152 V
	Alarm/warning flags implemented           : Yes
	Laser bias current high alarm             : Off
	Laser bias current low alarm              : Off
	Laser bias current high warning           : Off
	Laser bias current low warning            : Off
	Laser output power high alarm             : Off
	Laser output power low alarm              : Off
	Laser output power high warning           : Off
	Laser output power low warning            : Off
	Module temperature high alarm             : Off
	Module temperature low alarm              : Off
	Module temperature high warning           : On
	Module temperature low warning            : Off
	Module voltage high alarm                 : Off
	Module voltage low alarm                  : Off
	Module voltage high warning               : Off
	Module voltage low warning                : Off
	Laser rx power high alarm                 : Off
	Laser rx power low alarm                  : Off
	Laser rx power high warning               : Off
	Laser rx power low warning                : Off
	Laser bias current high alarm threshold   : 13.200 mA
	Laser bias current low alarm threshold    : 4.000 mA
	Laser bias current high warning threshold : 12.600 mA
	Laser bias current low warning threshold  : 5.000 mA
	Laser output power high alarm threshold   : 1.0000 mW / 0.00 dBm
	Laser output power low alarm threshold    : 0.1862 mW / -7.30 dBm
	Laser output power high warning threshold : 0.7943 mW / -1.00 dBm
	Laser output power low warning threshold  : 0.2512 mW / -6.00 dBm
	Module temperature high alarm threshold   : 78.00 degrees C / 172.40 degrees F
	Module temperature low alarm threshold    : -13.00 degrees C / 8.60 degrees F
	Module temperature high warning threshold : 73.00 degrees C / 163.40 degrees F
	Module temperature low warning threshold  : -8.00 degrees C / 17.60 degrees F
	Module voltage high alarm threshold       : 3.7000 V
	Module voltage low alarm threshold        : 2.9000 V
	Module voltage high warning threshold     : 3.6000 V
	Module voltage low warning threshold      : 3.0000 V
	Laser rx power high alarm threshold       : 1.0000 mW / 0.00 dBm
	Laser rx power low alarm threshold        : 0.0100 mW / -20.00 dBm
	Laser rx power high warning threshold     : 0.7943 mW / -1.00 dBm
	Laser rx power low warning threshold      : 0.0158 mW / -18.01 dBm
)ethtool";

// ethtool 6.1 `ethtool -m` of a QSFP28 100GBASE-SR4 (SFF-8636): qsfp.c. Lane 3 receives little light
// (below the module's low warning, above its low alarm) and the module latched its low warning.
inline constexpr std::string_view kQsfp28Text =
    R"ethtool(	Identifier                                : 0x11 (QSFP28)
	Extended identifier                       : 0xcc
	Extended identifier description           : 3.5W max. Power consumption
	Extended identifier description           : CDR present in TX, CDR present in RX
	Extended identifier description           : High Power Class (> 3.5 W) not enabled
	Connector                                 : 0x0c (MPO Parallel Optic)
	Transceiver codes                         : 0x80 0x00 0x00 0x00 0x00 0x00 0x00 0x00
	Transceiver type                          : 100G Ethernet: 100G Base-SR4 or 25GBase-SR
	Encoding                                  : 0x05 (64B/66B)
	BR, Nominal                               : 25500Mbps
	Rate identifier                           : 0x00
	Length (SMF,km)                           : 0km
	Length (OM3 50um)                         : 70m
	Length (OM2 50um)                         : 0m
	Length (OM1 62.5um)                       : 0m
	Length (Copper or Active cable)           : 0m
	Transmitter technology                    : 0x00 (850 nm VCSEL)
	Laser wavelength                          : 850.000nm
	Laser wavelength tolerance                : 10.000nm
	Vendor name                               : FINISAR CORP
	Vendor OUI                                : 00:90:65
	Vendor PN                                 : FTLC9551REPM
	Vendor rev                                : A0
	Vendor SN                                 : X5DAA0F
	Date code                                 : 190412
	Revision Compliance                       : SFF-8636 Rev 2.5/2.6/2.7
	Module temperature                        : 36.21 degrees C / 97.18 degrees F
	Module voltage                            : 3.2845 V
	Alarm/warning flags implemented           : Yes
	Laser tx bias current (Channel 1)         : 6.750 mA
	Laser tx bias current (Channel 2)         : 6.812 mA
	Laser tx bias current (Channel 3)         : 6.904 mA
	Laser tx bias current (Channel 4)         : 6.688 mA
	Transmit avg optical power (Channel 1)    : 0.7812 mW / -1.07 dBm
	Transmit avg optical power (Channel 2)    : 0.8013 mW / -0.96 dBm
	Transmit avg optical power (Channel 3)    : 0.7700 mW / -1.14 dBm
	Transmit avg optical power (Channel 4)    : 0.7922 mW / -1.01 dBm
	Rcvr signal avg optical power(Channel 1)  : 0.6950 mW / -1.58 dBm
	Rcvr signal avg optical power(Channel 2)  : 0.7011 mW / -1.54 dBm
	Rcvr signal avg optical power(Channel 3)  : 0.1047 mW / -9.80 dBm
	Rcvr signal avg optical power(Channel 4)  : 0.6623 mW / -1.79 dBm
	Laser bias current high alarm   (Chan 1)  : Off
	Laser bias current low alarm    (Chan 1)  : Off
	Laser bias current high warning (Chan 1)  : Off
	Laser bias current low warning  (Chan 1)  : Off
	Laser bias current high alarm   (Chan 2)  : Off
	Laser bias current low alarm    (Chan 2)  : Off
	Laser bias current high warning (Chan 2)  : Off
	Laser bias current low warning  (Chan 2)  : Off
	Laser bias current high alarm   (Chan 3)  : Off
	Laser bias current low alarm    (Chan 3)  : Off
	Laser bias current high warning (Chan 3)  : Off
	Laser bias current low warning  (Chan 3)  : Off
	Laser bias current high alarm   (Chan 4)  : Off
	Laser bias current low alarm    (Chan 4)  : Off
	Laser bias current high warning (Chan 4)  : Off
	Laser bias current low warning  (Chan 4)  : Off
	Module temperature high alarm             : Off
	Module temperature low alarm              : Off
	Module temperature high warning           : Off
	Module temperature low warning            : Off
	Module voltage high alarm                 : Off
	Module voltage low alarm                  : Off
	Module voltage high warning               : Off
	Module voltage low warning                : Off
	Laser tx power high alarm   (Channel 1)   : Off
	Laser tx power low alarm    (Channel 1)   : Off
	Laser tx power high warning (Channel 1)   : Off
	Laser tx power low warning  (Channel 1)   : Off
	Laser tx power high alarm   (Channel 2)   : Off
	Laser tx power low alarm    (Channel 2)   : Off
	Laser tx power high warning (Channel 2)   : Off
	Laser tx power low warning  (Channel 2)   : Off
	Laser tx power high alarm   (Channel 3)   : Off
	Laser tx power low alarm    (Channel 3)   : Off
	Laser tx power high warning (Channel 3)   : Off
	Laser tx power low warning  (Channel 3)   : Off
	Laser tx power high alarm   (Channel 4)   : Off
	Laser tx power low alarm    (Channel 4)   : Off
	Laser tx power high warning (Channel 4)   : Off
	Laser tx power low warning  (Channel 4)   : Off
	Laser rx power high alarm   (Channel 1)   : Off
	Laser rx power low alarm    (Channel 1)   : Off
	Laser rx power high warning (Channel 1)   : Off
	Laser rx power low warning  (Channel 1)   : Off
	Laser rx power high alarm   (Channel 2)   : Off
	Laser rx power low alarm    (Channel 2)   : Off
	Laser rx power high warning (Channel 2)   : Off
	Laser rx power low warning  (Channel 2)   : Off
	Laser rx power high alarm   (Channel 3)   : Off
	Laser rx power low alarm    (Channel 3)   : Off
	Laser rx power high warning (Channel 3)   : Off
	Laser rx power low warning  (Channel 3)   : On
	Laser rx power high alarm   (Channel 4)   : Off
	Laser rx power low alarm    (Channel 4)   : Off
	Laser rx power high warning (Channel 4)   : Off
	Laser rx power low warning  (Channel 4)   : Off
	Laser bias current high alarm threshold   : 10.000 mA
	Laser bias current low alarm threshold    : 2.000 mA
	Laser bias current high warning threshold : 9.000 mA
	Laser bias current low warning threshold  : 3.000 mA
	Laser output power high alarm threshold   : 3.4674 mW / 5.40 dBm
	Laser output power low alarm threshold    : 0.0724 mW / -11.40 dBm
	Laser output power high warning threshold : 1.7378 mW / 2.40 dBm
	Laser output power low warning threshold  : 0.1445 mW / -8.40 dBm
	Module temperature high alarm threshold   : 75.00 degrees C / 167.00 degrees F
	Module temperature low alarm threshold    : -5.00 degrees C / 23.00 degrees F
	Module temperature high warning threshold : 70.00 degrees C / 158.00 degrees F
	Module temperature low warning threshold  : 0.00 degrees C / 32.00 degrees F
	Module voltage high alarm threshold       : 3.6300 V
	Module voltage low alarm threshold        : 2.9700 V
	Module voltage high warning threshold     : 3.4650 V
	Module voltage low warning threshold      : 3.1350 V
	Laser rx power high alarm threshold       : 3.4674 mW / 5.40 dBm
	Laser rx power low alarm threshold        : 0.0724 mW / -11.40 dBm
	Laser rx power high warning threshold     : 1.7378 mW / 2.40 dBm
	Laser rx power low warning threshold      : 0.1445 mW / -8.40 dBm
)ethtool";

// ethtool 6.1 `ethtool -m` of a QSFP-DD 400G SR8 (CMIS, 8 lanes): cmis.c. Lane 8 receives no light. Its
// lane flags are as 6.1 prints them (`byte & lane index`): odd indexes read On from lane 1's bit.
inline constexpr std::string_view kCmisText =
    R"ethtool(	Identifier                                : 0x18 (QSFP-DD Double Density 8X Pluggable Transceiver (INF-8628))
	Power class                               : 6
	Max power                                 : 12.00W
	Connector                                 : 0x28 (MPO 1x16)
	Cable assembly length                     : 0.00m
	Tx CDR bypass control                     : No
	Rx CDR bypass control                     : No
	Tx CDR                                    : Yes
	Rx CDR                                    : Yes
	Transmitter technology                    : 0x00 (850 nm VCSEL)
	Laser wavelength                          : 850.000nm
	Laser wavelength tolerance                : 10.000nm
	Length (SMF)                              : 0.00km
	Length (OM5)                              : 0m
	Length (OM4)                              : 100m
	Length (OM3 50/125um)                     : 70m
	Length (OM2 50/125um)                     : 0m
	Vendor name                               : NVIDIA
	Vendor OUI                                : 48:b0:2d
	Vendor PN                                 : MMA1Z00-NS400
	Vendor rev                                : A2
	Vendor SN                                 : MT2231FT01234
	Date code                                 : 220803
	Revision compliance                       : Rev. 4.0
	Module State                              : 0x03 (ModuleReady)
	LowPwrAllowRequestHW                      : Off
	LowPwrRequestSW                           : Off
	Module temperature                        : 45.12 degrees C / 113.22 degrees F
	Module voltage                            : 3.2950 V
	Laser tx bias current (Channel 1)         : 7.400 mA
	Laser tx bias current (Channel 2)         : 7.420 mA
	Laser tx bias current (Channel 3)         : 7.440 mA
	Laser tx bias current (Channel 4)         : 7.460 mA
	Laser tx bias current (Channel 5)         : 7.480 mA
	Laser tx bias current (Channel 6)         : 7.500 mA
	Laser tx bias current (Channel 7)         : 7.520 mA
	Laser tx bias current (Channel 8)         : 7.540 mA
	Transmit avg optical power (Channel 1)    : 0.9120 mW / -0.40 dBm
	Transmit avg optical power (Channel 2)    : 0.9020 mW / -0.45 dBm
	Transmit avg optical power (Channel 3)    : 0.8920 mW / -0.50 dBm
	Transmit avg optical power (Channel 4)    : 0.8820 mW / -0.55 dBm
	Transmit avg optical power (Channel 5)    : 0.8720 mW / -0.59 dBm
	Transmit avg optical power (Channel 6)    : 0.8620 mW / -0.64 dBm
	Transmit avg optical power (Channel 7)    : 0.8520 mW / -0.70 dBm
	Transmit avg optical power (Channel 8)    : 0.8420 mW / -0.75 dBm
	Rcvr signal avg optical power (Channel 1) : 0.8311 mW / -0.80 dBm
	Rcvr signal avg optical power (Channel 2) : 0.8102 mW / -0.91 dBm
	Rcvr signal avg optical power (Channel 3) : 0.7950 mW / -1.00 dBm
	Rcvr signal avg optical power (Channel 4) : 0.8200 mW / -0.86 dBm
	Rcvr signal avg optical power (Channel 5) : 0.8050 mW / -0.94 dBm
	Rcvr signal avg optical power (Channel 6) : 0.7990 mW / -0.97 dBm
	Rcvr signal avg optical power (Channel 7) : 0.8123 mW / -0.90 dBm
	Rcvr signal avg optical power (Channel 8) : 0.0000 mW / -inf dBm
	Module temperature high alarm             : Off
	Module temperature low alarm              : Off
	Module temperature high warning           : Off
	Module temperature low warning            : Off
	Module voltage high alarm                 : Off
	Module voltage low alarm                  : Off
	Module voltage high warning               : Off
	Module voltage low warning                : Off
	Laser bias current high alarm   (Chan 1)  : Off
	Laser bias current low alarm    (Chan 1)  : Off
	Laser bias current high warning (Chan 1)  : Off
	Laser bias current low warning  (Chan 1)  : Off
	Laser tx power high alarm   (Channel 1)   : Off
	Laser tx power low alarm    (Channel 1)   : Off
	Laser tx power high warning (Channel 1)   : Off
	Laser tx power low warning  (Channel 1)   : Off
	Laser rx power high alarm   (Channel 1)   : Off
	Laser rx power low alarm    (Channel 1)   : Off
	Laser rx power high warning (Channel 1)   : Off
	Laser rx power low warning  (Channel 1)   : Off
	Laser bias current high alarm   (Chan 2)  : Off
	Laser bias current low alarm    (Chan 2)  : Off
	Laser bias current high warning (Chan 2)  : Off
	Laser bias current low warning  (Chan 2)  : Off
	Laser tx power high alarm   (Channel 2)   : Off
	Laser tx power low alarm    (Channel 2)   : Off
	Laser tx power high warning (Channel 2)   : Off
	Laser tx power low warning  (Channel 2)   : Off
	Laser rx power high alarm   (Channel 2)   : Off
	Laser rx power low alarm    (Channel 2)   : On
	Laser rx power high warning (Channel 2)   : Off
	Laser rx power low warning  (Channel 2)   : Off
	Laser bias current high alarm   (Chan 3)  : Off
	Laser bias current low alarm    (Chan 3)  : Off
	Laser bias current high warning (Chan 3)  : Off
	Laser bias current low warning  (Chan 3)  : Off
	Laser tx power high alarm   (Channel 3)   : Off
	Laser tx power low alarm    (Channel 3)   : Off
	Laser tx power high warning (Channel 3)   : Off
	Laser tx power low warning  (Channel 3)   : Off
	Laser rx power high alarm   (Channel 3)   : Off
	Laser rx power low alarm    (Channel 3)   : Off
	Laser rx power high warning (Channel 3)   : Off
	Laser rx power low warning  (Channel 3)   : Off
	Laser bias current high alarm   (Chan 4)  : Off
	Laser bias current low alarm    (Chan 4)  : Off
	Laser bias current high warning (Chan 4)  : Off
	Laser bias current low warning  (Chan 4)  : Off
	Laser tx power high alarm   (Channel 4)   : Off
	Laser tx power low alarm    (Channel 4)   : Off
	Laser tx power high warning (Channel 4)   : Off
	Laser tx power low warning  (Channel 4)   : Off
	Laser rx power high alarm   (Channel 4)   : Off
	Laser rx power low alarm    (Channel 4)   : On
	Laser rx power high warning (Channel 4)   : Off
	Laser rx power low warning  (Channel 4)   : Off
	Laser bias current high alarm   (Chan 5)  : Off
	Laser bias current low alarm    (Chan 5)  : Off
	Laser bias current high warning (Chan 5)  : Off
	Laser bias current low warning  (Chan 5)  : Off
	Laser tx power high alarm   (Channel 5)   : Off
	Laser tx power low alarm    (Channel 5)   : Off
	Laser tx power high warning (Channel 5)   : Off
	Laser tx power low warning  (Channel 5)   : Off
	Laser rx power high alarm   (Channel 5)   : Off
	Laser rx power low alarm    (Channel 5)   : Off
	Laser rx power high warning (Channel 5)   : Off
	Laser rx power low warning  (Channel 5)   : Off
	Laser bias current high alarm   (Chan 6)  : Off
	Laser bias current low alarm    (Chan 6)  : Off
	Laser bias current high warning (Chan 6)  : Off
	Laser bias current low warning  (Chan 6)  : Off
	Laser tx power high alarm   (Channel 6)   : Off
	Laser tx power low alarm    (Channel 6)   : Off
	Laser tx power high warning (Channel 6)   : Off
	Laser tx power low warning  (Channel 6)   : Off
	Laser rx power high alarm   (Channel 6)   : Off
	Laser rx power low alarm    (Channel 6)   : On
	Laser rx power high warning (Channel 6)   : Off
	Laser rx power low warning  (Channel 6)   : Off
	Laser bias current high alarm   (Chan 7)  : Off
	Laser bias current low alarm    (Chan 7)  : Off
	Laser bias current high warning (Chan 7)  : Off
	Laser bias current low warning  (Chan 7)  : Off
	Laser tx power high alarm   (Channel 7)   : Off
	Laser tx power low alarm    (Channel 7)   : Off
	Laser tx power high warning (Channel 7)   : Off
	Laser tx power low warning  (Channel 7)   : Off
	Laser rx power high alarm   (Channel 7)   : Off
	Laser rx power low alarm    (Channel 7)   : Off
	Laser rx power high warning (Channel 7)   : Off
	Laser rx power low warning  (Channel 7)   : Off
	Laser bias current high alarm   (Chan 8)  : Off
	Laser bias current low alarm    (Chan 8)  : Off
	Laser bias current high warning (Chan 8)  : Off
	Laser bias current low warning  (Chan 8)  : Off
	Laser tx power high alarm   (Channel 8)   : Off
	Laser tx power low alarm    (Channel 8)   : Off
	Laser tx power high warning (Channel 8)   : Off
	Laser tx power low warning  (Channel 8)   : Off
	Laser rx power high alarm   (Channel 8)   : Off
	Laser rx power low alarm    (Channel 8)   : On
	Laser rx power high warning (Channel 8)   : Off
	Laser rx power low warning  (Channel 8)   : Off
	Laser bias current high alarm threshold   : 15.000 mA
	Laser bias current low alarm threshold    : 1.000 mA
	Laser bias current high warning threshold : 13.000 mA
	Laser bias current low warning threshold  : 2.000 mA
	Laser output power high alarm threshold   : 3.1623 mW / 5.00 dBm
	Laser output power low alarm threshold    : 0.0891 mW / -10.50 dBm
	Laser output power high warning threshold : 1.9953 mW / 3.00 dBm
	Laser output power low warning threshold  : 0.1778 mW / -7.50 dBm
	Module temperature high alarm threshold   : 80.00 degrees C / 176.00 degrees F
	Module temperature low alarm threshold    : -10.00 degrees C / 14.00 degrees F
	Module temperature high warning threshold : 75.00 degrees C / 167.00 degrees F
	Module temperature low warning threshold  : -5.00 degrees C / 23.00 degrees F
	Module voltage high alarm threshold       : 3.4650 V
	Module voltage low alarm threshold        : 3.1350 V
	Module voltage high warning threshold     : 3.4000 V
	Module voltage low warning threshold      : 3.2000 V
	Laser rx power high alarm threshold       : 3.1623 mW / 5.00 dBm
	Laser rx power low alarm threshold        : 0.0407 mW / -13.90 dBm
	Laser rx power high warning threshold     : 1.9953 mW / 3.00 dBm
	Laser rx power low warning threshold      : 0.0813 mW / -10.90 dBm
)ethtool";

// ethtool 6.1 `ethtool -m` of a QSFP28 passive copper cable: qsfp.c prints its temperature and voltage as
// zero and nothing else of diagnostics.
inline constexpr std::string_view kQsfpDacText =
    R"ethtool(	Identifier                                : 0x11 (QSFP28)
	Extended identifier                       : 0x00
	Extended identifier description           : 1.5W max. Power consumption
	Extended identifier description           : No CDR in TX, No CDR in RX
	Extended identifier description           : High Power Class (> 3.5 W) not enabled
	Connector                                 : 0x23 (No separable connector)
	Transceiver codes                         : 0x80 0x00 0x00 0x00 0x00 0x00 0x00 0x00
	Transceiver type                          : 100G Ethernet: 100G Base-CR4 or 25G Base-CR CA-L
	Encoding                                  : 0x00 (unspecified)
	BR, Nominal                               : 25500Mbps
	Rate identifier                           : 0x00
	Length (SMF,km)                           : 0km
	Length (OM3 50um)                         : 0m
	Length (OM2 50um)                         : 0m
	Length (OM1 62.5um)                       : 0m
	Length (Copper or Active cable)           : 3m
	Transmitter technology                    : 0xa0 (Copper cable unequalized)
	Attenuation at 2.5GHz                     : 4db
	Attenuation at 5.0GHz                     : 5db
	Attenuation at 7.0GHz                     : 7db
	Attenuation at 12.9GHz                    : 10db
	Vendor name                               : Mellanox
	Vendor OUI                                : 00:02:c9
	Vendor PN                                 : MCP1600-C003
	Vendor rev                                : A2
	Vendor SN                                 : MT1710VS01234
	Date code                                 : 170309
	Revision Compliance                       : SFF-8636 Rev 2.5/2.6/2.7
	Module temperature                        : 0.00 degrees C / 32.00 degrees F
	Module voltage                            : 0.0000 V
)ethtool";

// ethtool 6.1 `ethtool -m` (ioctl path) of an SFP+ passive copper cable whose EEPROM has no A2h page.
inline constexpr std::string_view kSfpNoDomText = R"ethtool(	Identifier                                : 0x03 (SFP)
	Extended identifier                       : 0x04 (GBIC/SFP defined by 2-wire interface ID)
	Connector                                 : 0x21 (Copper pigtail)
	Transceiver codes                         : 0x00 0x00 0x00 0x00 0x00 0x04 0x00 0x00 0x00
	Transceiver type                          : Passive Cable
	Encoding                                  : 0x00 (unspecified)
	BR, Nominal                               : 10300MBd
	Rate identifier                           : 0x00 (unspecified)
	Length (SMF,km)                           : 0km
	Length (SMF)                              : 0m
	Length (50um)                             : 0m
	Length (62.5um)                           : 0m
	Length (Copper)                           : 1m
	Length (OM3)                              : 0m
	Passive Cu cmplnce.                       : 0x01 (SFF-8431 appendix E) [SFF-8472 rev10.4 only]
	Vendor name                               : CISCO-TYCO
	Vendor OUI                                : 00:40:20
	Vendor PN                                 : 2032237-1
	Vendor rev                                : B
	Option values                             : 0x00 0x00
	BR margin, max                            : 0%
	BR margin, min                            : 0%
	Vendor SN                                 : TED1527A1BC
	Date code                                 : 150703
	Optical diagnostics support               : No
)ethtool";

// `ethtool --json -m` of the SFP above, as the module-info JSON series of 2025 prints it: the thresholds
// repeat the readings' names ("module_temperature" twice), which a plain JSON parser keeps only the last of.
inline constexpr std::string_view kSfpJsonRepeatedKeys = R"ethtool([ {
        "identifier": 3,
        "identifier_description": "SFP",
        "extended_identifier": 4,
        "extended_identifier_description": "GBIC/SFP defined by 2-wire interface ID",
        "connector": 7,
        "connector_description": "LC",
        "transceiver_codes": [ 16,0,0,1,0,0,0,0,0 ],
        "transceiver_type": "10G Ethernet: 10G Base-SR",
        "encoding": 6,
        "encoding_description": "64B/66B",
        "br_nominal": 10300,
        "rate_identifier": 0,
        "rate_identifier_description": "unspecified",
        "length_(smf)": 0,
        "length_(om2)": 8,
        "length_(om1)": 3,
        "length_(copper_or_active_cable)": 0,
        "length_(om3)": 30,
        "laser_wavelength": 850,
        "vendor_name": "FINISAR CORP.",
        "vendor_oui": [ 0,144,101 ],
        "vendor_pn": "FTLX8574D3BCL",
        "vendor_rev": "A",
        "option_values": [ 0,26 ],
        "option": "TX_DISABLE implemented",
        "br_margin_max": 0,
        "br_margin_min": 0,
        "vendor_sn": "AQG0N4R",
        "date_code": "140818",
        "optical_diagnostics_support": true,
        "laser_bias_current": 7.862,
        "laser_output_power": 0.5871,
        "rx_power": {
            "value": 0.4957,
            "type": "Receiver signal average optical power"
        },
        "module_temperature": 32.4609,
        "module_voltage": 3.3152,
        "alarm/warning_flags_implemented": true,
        "laser_bias_current_high_alarm": false,
        "laser_bias_current_low_alarm": false,
        "laser_bias_current_high_warning": false,
        "laser_bias_current_low_warning": false,
        "laser_output_power_high_alarm": false,
        "laser_output_power_low_alarm": false,
        "laser_output_power_high_warning": false,
        "laser_output_power_low_warning": false,
        "module_temperature_high_alarm": false,
        "module_temperature_low_alarm": false,
        "module_temperature_high_warning": true,
        "module_temperature_low_warning": false,
        "module_voltage_high_alarm": false,
        "module_voltage_low_alarm": false,
        "module_voltage_high_warning": false,
        "module_voltage_low_warning": false,
        "laser_rx_power_high_alarm": false,
        "laser_rx_power_low_alarm": false,
        "laser_rx_power_high_warning": false,
        "laser_rx_power_low_warning": false,
        "laser_bias_current": {
            "high_alarm_threshold": 13.2,
            "low_alarm_threshold": 4,
            "high_warning_threshold": 12.6,
            "low_warning_threshold": 5
        },
        "laser_output_power": {
            "high_alarm_threshold": 1,
            "low_alarm_threshold": 0.1862,
            "high_warning_threshold": 0.7943,
            "low_warning_threshold": 0.2512
        },
        "module_temperature": {
            "high_alarm_threshold": 78,
            "low_alarm_threshold": -13,
            "high_warning_threshold": 73,
            "low_warning_threshold": -8
        },
        "module_voltage": {
            "high_alarm_threshold": 3.7,
            "low_alarm_threshold": 2.9,
            "high_warning_threshold": 3.6,
            "low_warning_threshold": 3
        },
        "laser_rx_power": {
            "high_alarm_threshold": 1,
            "low_alarm_threshold": 0.01,
            "high_warning_threshold": 0.7943,
            "low_warning_threshold": 0.0158
        }
    } ]
)ethtool";

// The same, as the proposed fix names the thresholds: "<name>_threshold" holding "high_alarm", ...
inline constexpr std::string_view kSfpJsonThresholdKeys = R"ethtool([ {
        "identifier": 3,
        "identifier_description": "SFP",
        "extended_identifier": 4,
        "extended_identifier_description": "GBIC/SFP defined by 2-wire interface ID",
        "connector": 7,
        "connector_description": "LC",
        "transceiver_codes": [ 16,0,0,1,0,0,0,0,0 ],
        "transceiver_type": "10G Ethernet: 10G Base-SR",
        "encoding": 6,
        "encoding_description": "64B/66B",
        "br_nominal": 10300,
        "rate_identifier": 0,
        "rate_identifier_description": "unspecified",
        "length_(smf)": 0,
        "length_(om2)": 8,
        "length_(om1)": 3,
        "length_(copper_or_active_cable)": 0,
        "length_(om3)": 30,
        "laser_wavelength": 850,
        "vendor_name": "FINISAR CORP.",
        "vendor_oui": [ 0,144,101 ],
        "vendor_pn": "FTLX8574D3BCL",
        "vendor_rev": "A",
        "option_values": [ 0,26 ],
        "option": "TX_DISABLE implemented",
        "br_margin_max": 0,
        "br_margin_min": 0,
        "vendor_sn": "AQG0N4R",
        "date_code": "140818",
        "optical_diagnostics_support": true,
        "laser_bias_current": 7.862,
        "laser_output_power": 0.5871,
        "rx_power": {
            "value": 0.4957,
            "type": "Receiver signal average optical power"
        },
        "module_temperature": 32.4609,
        "module_voltage": 3.3152,
        "alarm/warning_flags_implemented": true,
        "laser_bias_current_high_alarm": false,
        "laser_bias_current_low_alarm": false,
        "laser_bias_current_high_warning": false,
        "laser_bias_current_low_warning": false,
        "laser_output_power_high_alarm": false,
        "laser_output_power_low_alarm": false,
        "laser_output_power_high_warning": false,
        "laser_output_power_low_warning": false,
        "module_temperature_high_alarm": false,
        "module_temperature_low_alarm": false,
        "module_temperature_high_warning": true,
        "module_temperature_low_warning": false,
        "module_voltage_high_alarm": false,
        "module_voltage_low_alarm": false,
        "module_voltage_high_warning": false,
        "module_voltage_low_warning": false,
        "laser_rx_power_high_alarm": false,
        "laser_rx_power_low_alarm": false,
        "laser_rx_power_high_warning": false,
        "laser_rx_power_low_warning": false,
        "laser_bias_current_threshold": {
            "high_alarm": 13.2,
            "low_alarm": 4,
            "high_warning": 12.6,
            "low_warning": 5
        },
        "laser_output_power_threshold": {
            "high_alarm": 1,
            "low_alarm": 0.1862,
            "high_warning": 0.7943,
            "low_warning": 0.2512
        },
        "module_temperature_threshold": {
            "high_alarm": 78,
            "low_alarm": -13,
            "high_warning": 73,
            "low_warning": -8
        },
        "module_voltage_threshold": {
            "high_alarm": 3.7,
            "low_alarm": 2.9,
            "high_warning": 3.6,
            "low_warning": 3
        },
        "laser_rx_power_threshold": {
            "high_alarm": 1,
            "low_alarm": 0.01,
            "high_warning": 0.7943,
            "low_warning": 0.0158
        }
    } ]
)ethtool";

// `ethtool --json -m` of the QSFP28 above (qsfp.c's JSON branch): lanes as arrays, lane flags as arrays.
inline constexpr std::string_view kQsfp28Json = R"ethtool([ {
        "identifier": 17,
        "identifier_description": "QSFP28",
        "vendor_name": "FINISAR CORP",
        "vendor_oui": [ 0,144,101 ],
        "vendor_pn": "FTLC9551REPM",
        "vendor_rev": "A0",
        "vendor_sn": "X5DAA0F",
        "date_code": "190412",
        "revision_compliance": "SFF-8636 Rev 2.5/2.6/2.7",
        "module_temperature": 36.2109,
        "module_voltage": 3.2845,
        "alarm/warning_flags_implemented": true,
        "laser_tx_bias_current": [ 6.75,6.812,6.904,6.688 ],
        "transmit_avg_optical_power": [ 0.7812,0.8013,0.77,0.7922 ],
        "rx_power": {
            "values": [ 0.695,0.7011,0.1047,0.6623 ],
            "type": "Rcvr signal avg optical power"
        },
        "laser_bias_current_high_alarm": [ false,false,false,false ],
        "laser_bias_current_low_alarm": [ false,false,false,false ],
        "laser_bias_current_high_warning": [ false,false,false,false ],
        "laser_bias_current_low_warning": [ false,false,false,false ],
        "laser_tx_power_high_alarm": [ false,false,false,false ],
        "laser_tx_power_low_alarm": [ false,false,false,false ],
        "laser_tx_power_high_warning": [ false,false,false,false ],
        "laser_tx_power_low_warning": [ false,false,false,false ],
        "laser_rx_power_high_alarm": [ false,false,false,false ],
        "laser_rx_power_low_alarm": [ false,false,false,false ],
        "laser_rx_power_high_warning": [ false,false,false,false ],
        "laser_rx_power_low_warning": [ false,false,true,false ],
        "module_temperature_high_alarm": false,
        "module_temperature_low_alarm": false,
        "module_temperature_high_warning": false,
        "module_temperature_low_warning": false,
        "module_voltage_high_alarm": false,
        "module_voltage_low_alarm": false,
        "module_voltage_high_warning": false,
        "module_voltage_low_warning": false,
        "laser_bias_current": {
            "high_alarm_threshold": 10,
            "low_alarm_threshold": 2,
            "high_warning_threshold": 9,
            "low_warning_threshold": 3
        },
        "laser_output_power": {
            "high_alarm_threshold": 3.4674,
            "low_alarm_threshold": 0.0724,
            "high_warning_threshold": 1.7378,
            "low_warning_threshold": 0.1445
        },
        "module_temperature": {
            "high_alarm_threshold": 75,
            "low_alarm_threshold": -5,
            "high_warning_threshold": 70,
            "low_warning_threshold": 0
        },
        "module_voltage": {
            "high_alarm_threshold": 3.63,
            "low_alarm_threshold": 2.97,
            "high_warning_threshold": 3.465,
            "low_warning_threshold": 3.135
        },
        "laser_rx_power": {
            "high_alarm_threshold": 3.4674,
            "low_alarm_threshold": 0.0724,
            "high_warning_threshold": 1.7378,
            "low_warning_threshold": 0.1445
        }
    } ]
)ethtool";

// `ethtool --json -m` of an OSFP with 16 lanes in two CMIS banks (cmis.c's JSON branch repeats each lane
// array's name per bank); lane 14 receives little light; thresholds named "<name>_thresholds".
inline constexpr std::string_view kCmis16LaneJson = R"ethtool([ {
        "identifier": 25,
        "identifier_description": "OSFP 8X Pluggable Transceiver",
        "vendor_name": "NVIDIA",
        "vendor_pn": "MMA4Z00-NS",
        "vendor_sn": "MT2301FT00042",
        "module_temperature": 51.5,
        "module_voltage": 3.301,
        "laser_tx_bias_current": [ 7.0,7.01,7.02,7.03,7.04,7.05,7.06,7.07 ],
        "laser_tx_bias_current": [ 8.0,8.01,8.02,8.03,8.04,8.05,8.06,8.07 ],
        "transmit_avg_optical_power": [ 0.9,0.9,0.9,0.9,0.9,0.9,0.9,0.9 ],
        "transmit_avg_optical_power": [ 0.9,0.9,0.9,0.9,0.9,0.9,0.9,0.9 ],
        "rx_power": {
            "values": [ 0.8,0.8,0.8,0.8,0.8,0.8,0.8,0.8 ],
            "type": "Rcvr signal avg optical power"
        },
        "rx_power": {
            "values": [ 0.8,0.8,0.8,0.8,0.8,0.05,0.8,0.8 ],
            "type": "Rcvr signal avg optical power"
        },
        "module_temperature_high_alarm": false,
        "module_temperature_low_alarm": false,
        "module_temperature_high_warning": false,
        "module_temperature_low_warning": false,
        "module_voltage_high_alarm": false,
        "module_voltage_low_alarm": false,
        "module_voltage_high_warning": false,
        "module_voltage_low_warning": false,
        "laser_bias_current_high_alarm": [ false,false,false,false,false,false,false,false ],
        "laser_bias_current_low_alarm": [ false,true,false,true,false,true,false,true ],
        "laser_bias_current_high_warning": [ false,false,false,false,false,false,false,false ],
        "laser_bias_current_low_warning": [ false,false,false,false,false,false,false,false ],
        "laser_tx_power_high_alarm": [ false,false,false,false,false,false,false,false ],
        "laser_tx_power_low_alarm": [ false,true,false,true,false,true,false,true ],
        "laser_tx_power_high_warning": [ false,false,false,false,false,false,false,false ],
        "laser_tx_power_low_warning": [ false,false,false,false,false,false,false,false ],
        "laser_rx_power_high_alarm": [ false,false,false,false,false,false,false,false ],
        "laser_rx_power_low_alarm": [ false,true,false,true,false,true,false,true ],
        "laser_rx_power_high_warning": [ false,false,false,false,false,false,false,false ],
        "laser_rx_power_low_warning": [ false,false,false,false,false,false,false,false ],
        "laser_bias_current_high_alarm": [ false,false,false,false,false,false,false,false ],
        "laser_bias_current_low_alarm": [ false,true,false,true,false,true,false,true ],
        "laser_bias_current_high_warning": [ false,false,false,false,false,false,false,false ],
        "laser_bias_current_low_warning": [ false,false,false,false,false,false,false,false ],
        "laser_tx_power_high_alarm": [ false,false,false,false,false,false,false,false ],
        "laser_tx_power_low_alarm": [ false,true,false,true,false,true,false,true ],
        "laser_tx_power_high_warning": [ false,false,false,false,false,false,false,false ],
        "laser_tx_power_low_warning": [ false,false,false,false,false,false,false,false ],
        "laser_rx_power_high_alarm": [ false,false,false,false,false,false,false,false ],
        "laser_rx_power_low_alarm": [ false,true,false,true,false,true,false,true ],
        "laser_rx_power_high_warning": [ false,false,false,false,false,false,false,false ],
        "laser_rx_power_low_warning": [ false,false,false,false,false,false,false,false ],
        "laser_bias_current_thresholds": {
            "high_alarm": 15,
            "low_alarm": 1,
            "high_warning": 13,
            "low_warning": 2
        },
        "laser_output_power_thresholds": {
            "high_alarm": 3.1623,
            "low_alarm": 0.0891,
            "high_warning": 1.9953,
            "low_warning": 0.1778
        },
        "module_temperature_thresholds": {
            "high_alarm": 80,
            "low_alarm": -10,
            "high_warning": 75,
            "low_warning": -5
        },
        "module_voltage_thresholds": {
            "high_alarm": 3.465,
            "low_alarm": 3.135,
            "high_warning": 3.4,
            "low_warning": 3.2
        },
        "laser_rx_power_thresholds": {
            "high_alarm": 3.1623,
            "low_alarm": 0.0407,
            "high_warning": 1.9953,
            "low_warning": 0.0813
        }
    } ]
)ethtool";

// ethtool 6.1 `ethtool -I --show-fec` on a 100G port whose driver counts RS-FEC per lane (netlink/fec.c:
// "  %s: %llu" and "    Lane %d: %llu").
inline constexpr std::string_view kFecLanesText = R"ethtool(FEC parameters for ens1f0np0:
Supported/Configured FEC encodings: Auto RS BaseR
Active FEC encoding: RS
Statistics:
  corrected_blocks: 12345
    Lane 0: 3000
    Lane 1: 3100
    Lane 2: 3200
    Lane 3: 3045
  uncorrectable_blocks: 2
    Lane 0: 0
    Lane 1: 0
    Lane 2: 2
    Lane 3: 0
)ethtool";

// The same as `ethtool --json -I --show-fec`.
inline constexpr std::string_view kFecLanesJson = R"ethtool([ {
        "ifname": "ens1f0np0",
        "config": [ "Auto","RS","BaseR" ],
        "active": [ "RS" ],
        "statistics": {
            "corrected_blocks": {
                "total": 12345,
                "lanes": [ 3000,3100,3200,3045 ]
            },
            "uncorrectable_blocks": {
                "total": 2,
                "lanes": [ 0,0,2,0 ]
            }
        }
    } ]
)ethtool";

// `ethtool --json -I --show-fec` where the driver counts totals only, corrected bits among them.
inline constexpr std::string_view kFecTotalsJson = R"ethtool([ {
        "ifname": "eth2",
        "config": [ "Auto" ],
        "active": [ "BaseR" ],
        "statistics": {
            "corrected_blocks": {
                "total": 42
            },
            "uncorrectable_blocks": {
                "total": 0
            },
            "corrected_bits": {
                "total": 57
            }
        }
    } ]
)ethtool";

// ethtool 6.1 `ethtool -I --show-fec` where the driver reports settings but no counters.
inline constexpr std::string_view kFecNoStatisticsText = R"ethtool(FEC parameters for eno1:
Supported/Configured FEC encodings: Off
Active FEC encoding: Off
)ethtool";

// ethtool 6.1 on a NIC whose driver has no FEC at all (a veth, the loopback).
inline constexpr std::string_view kFecNotSupported = "netlink error: Operation not supported\n";

// `ethtool --json -I --show-fec` with kernel 6.18's error histogram, as ethtool's patch "netlink: fec: add
// errors histogram statistics" (October 2025) prints it.
inline constexpr std::string_view kFecHistogramJson = R"ethtool([ {
        "ifname": "eni8np1",
        "config": [ "None" ],
        "active": [ "RS" ],
        "statistics": {
            "corrected_blocks": {
                "total": 123
            },
            "uncorrectable_blocks": {
                "total": 4
            },
            "hist": [ {
                    "bin_low": 0,
                    "bin_high": 0,
                    "total": 445,
                    "lanes": [ 125,120,100,100 ]
                },{
                    "bin_low": 1,
                    "bin_high": 3,
                    "total": 12,
                    "lanes": [ 3,3,3,3 ]
                },{
                    "bin_low": 4,
                    "bin_high": 7,
                    "total": 2,
                    "lanes": [ 0,2,0,0 ]
                } ]
        }
    } ]
)ethtool";

// The same patch's text: counters' lanes in brackets, bins as "fec_symbols_err_<low>[_to_<high>]".
inline constexpr std::string_view kFecHistogramText = R"ethtool(FEC parameters for eni8np1:
Supported/Configured FEC encodings: None
Active FEC encoding: RS
Statistics:
  corrected_blocks: 123 [ per_lane: 30, 31, 32, 30 ]
  uncorrectable_blocks: 4
  fec_symbols_err_0: 445 [ per_lane: 125, 120, 100, 100 ]
  fec_symbols_err_1_to_3: 12 [ per_lane: 3, 3, 3, 3 ]
  fec_symbols_err_4_to_7: 2 [ per_lane: 0, 2, 0, 0 ]
)ethtool";

}  // namespace tusk::testing
