// The node an agent is taken to be on comes from what its certificate proves, never from the
// hostname it reports alone.
#include "controller/run/agent_identity.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

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
  // A hostname arrives escaped (peer_texts.hpp) and reaches the proof as it arrived, not escaped twice.
  EXPECT_THAT(node_of_agent("lab-a", "x\\x1b[2J", true, {"lab-a"}).proof, HasSubstr("'x\\x1b[2J'"));
}

TEST(AgentIdentity, NoHostnameIsTheCertifiedNameAndWithoutTlsNothingIsProven) {
  EXPECT_EQ(node_of_agent("lab-a", "", true, {"lab-a"}).node, "lab-a");
  const AgentNode plain = node_of_agent("lab-a", "lab-b", false, {});
  EXPECT_EQ(plain.node, "lab-b");
  EXPECT_FALSE(plain.proven);
  EXPECT_THAT(plain.proof, HasSubstr("nothing proves it"));
}

// One agent per NIC whose certificates name only themselves: the operator's map says which host
// each is on, over whatever hostname it reports.
TEST(AgentIdentity, TheOperatorsMapNamesTheNodeOfAnAgentItLists) {
  const AgentNode mapped = node_of_mapped_agent("gpu01", "gpu01.rack4", true);
  EXPECT_EQ(mapped.node, "gpu01");
  EXPECT_TRUE(mapped.proven);
  EXPECT_FALSE(mapped.hostname_refused);
  EXPECT_THAT(mapped.proof, HasSubstr("--agent-nodes map, for the agent its certificate names"));
  EXPECT_THAT(node_of_mapped_agent("gpu01", "gpu09", true).proof, HasSubstr("it reported the hostname 'gpu09'"));
  EXPECT_FALSE(node_of_mapped_agent("gpu01", "gpu01", false).proven);
}

class AgentNodesFile : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_ = std::filesystem::temp_directory_path() / ("tusk-agent-nodes-" + std::to_string(getpid()));
};

TEST_F(AgentNodesFile, LinesOfAnAgentAndItsNodeAreRead) {
  const auto nodes = load_agent_nodes(write("# rack 4\ngpu01-nic0 gpu01\n\n  gpu01-nic1\tgpu01  # spare\n"));
  EXPECT_EQ(nodes, (std::map<std::string, std::string>{{"gpu01-nic0", "gpu01"}, {"gpu01-nic1", "gpu01"}}));
}

TEST_F(AgentNodesFile, AnythingElseIsRefusedNamingTheFileAndLine) {
  const auto error = [&](const std::string& text) {
    try {
      load_agent_nodes(write(text));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("a b\nc\n"), path_ + ":2: write one agent and its node: AGENT NODE");
  EXPECT_EQ(error("a b c\n"), path_ + ":1: write one agent and its node: AGENT NODE");
  EXPECT_EQ(error("a b\na c\n"), path_ + ":2: agent 'a' is listed twice");
  EXPECT_EQ(error("a b\x1b[2J\n"), path_ + ":1: 'b\\x1b[2J' is no host's name (letters, digits, '.', '-')");
  EXPECT_EQ(error("-a b\n"), path_ + ":1: '-a' is no agent's name (letters, digits, '.', '_', '-')");
  EXPECT_THAT(error(""), "no error");
  EXPECT_THROW(load_agent_nodes(path_ + ".missing"), std::invalid_argument);
}

}  // namespace
}  // namespace tusk
