// Built with every object of tusk_controller_core and nothing of tusk_controller_lib (the fuzz
// targets link the core alone): a core file that calls into the library (localisation, reports,
// the switches) fails this link in every local build, not only in CI's fuzz tree. Running it
// checks nothing more: the link is the test.
int main() {
  return 0;
}
