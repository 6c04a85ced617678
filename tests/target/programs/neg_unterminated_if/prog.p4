// Preprocessor: an #ifdef without its #endif (reported at the #ifdef).
#include <core.p4>
#include <v1model.p4>

#ifdef WITH_EXTRA_HEADER
header extra_t { bit<8> v; }

struct meta_t { }
