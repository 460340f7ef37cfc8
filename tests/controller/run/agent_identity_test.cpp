// The node an agent is taken to be on comes from what its certificate proves, never from the
// hostname it reports alone.
#include "controller/run/agent_identity.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tusk {
namespace {

using ::testing::HasSubstr;

TEST(AgentIdentity, AHostnameTheCertificateNamesIsTheNode) {
  const AgentNode by_name = node_of_agent("gpu01", "gpu01.rack4.example", true, {"gpu01"});
  EXPECT_EQ(by_name.node, "gpu01.rack4.example");
  EXPECT_TRUE(by_name.proven);
  EXPECT_FALSE(by_name.hostname_refused);
  // A pod's agent named for its pod, on the node its certificate names as a DNS name.
  const AgentNode by_dns =
      node_of_agent("tusk-agent-7xk2p", "gpu02", true, {"tusk-agent-7xk2p", "gpu02.cluster.local"});
  EXPECT_EQ(by_dns.node, "gpu02");
  EXPECT_THAT(by_dns.proof, HasSubstr("which its certificate names"));
}

TEST(AgentIdentity, AHostnameTheCertificateDoesNotNameIsRefusedForTheCertifiedName) {
  const AgentNode node = node_of_agent("lab-a", "lab-b", true, {"lab-a"});
  EXPECT_EQ(node.node, "lab-a");
  EXPECT_TRUE(node.proven);
  EXPECT_TRUE(node.hostname_refused);
  EXPECT_THAT(node.proof, HasSubstr("it reported the hostname 'lab-b', which its certificate does not name"));
  // Nor does a name that only starts like a certified one pass.
  EXPECT_EQ(node_of_agent("lab-a", "lab-a2", true, {"lab-a"}).node, "lab-a");
  // Escape bytes in a reported hostname reach the proof escaped.
  EXPECT_THAT(node_of_agent("lab-a", "x\x1b[2J", true, {"lab-a"}).proof, HasSubstr("x\\x1b[2J"));
}

TEST(AgentIdentity, NoHostnameIsTheCertifiedNameAndWithoutTlsNothingIsProven) {
  EXPECT_EQ(node_of_agent("lab-a", "", true, {"lab-a"}).node, "lab-a");
  const AgentNode plain = node_of_agent("lab-a", "lab-b", false, {});
  EXPECT_EQ(plain.node, "lab-b");
  EXPECT_FALSE(plain.proven);
  EXPECT_THAT(plain.proof, HasSubstr("nothing proves it"));
}

}  // namespace
}  // namespace tusk
