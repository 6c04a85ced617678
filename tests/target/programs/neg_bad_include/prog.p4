// Preprocessor: an include file that exists nowhere (not next to the program, not in -I dirs, not in the
// project's include directory).
#include <core.p4>
#include <v1model.p4>
#include "headers_that_do_not_exist.p4"

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
