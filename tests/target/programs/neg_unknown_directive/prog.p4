// Preprocessor: a misspelled directive.
#include <core.p4>
#include <v1model.p4>

#defne WIDTH 8
header h_t { bit<8> v; }
