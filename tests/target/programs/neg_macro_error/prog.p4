// Syntax error inside a macro expansion: the diagnostic points into the #define (line 8, where the field
// after the one missing its semicolon starts), with a note at the use on line 9.
#include <core.p4>
#include <v1model.p4>

#define FIELDS(p) bit<8> p##a; \
                  bit<16> p##b \
                  bit<8> p##c;
header k_t { FIELDS(x) }
struct headers_t { k_t k; }
struct meta_t { }
