#include "controller/commands.hpp"

int main(int argc, char** argv) {
  return tusk::controller_main(argc, argv);
}
