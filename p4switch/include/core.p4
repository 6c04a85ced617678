/* p4ina: the P4_16 core library (language specification, appendix "core.p4").
 *
 * Declarations every P4_16 program sees through `#include <core.p4>`: the standard error codes, the packet_in and
 * packet_out externs used by parsers and deparsers, verify(), NoAction and the three standard match kinds. Names,
 * order and signatures follow the specification and p4c's p4include/core.p4, because P4Info names, error codes and
 * ids are derived from them. Written for the p4ina embedded target.
 */

#ifndef _CORE_P4_
#define _CORE_P4_

/* Standard errors; error.NoError is the value of parser_error when parsing succeeded. Order matters: the target
 * numbers error codes in declaration order (architecture and program errors follow). */
error {
    NoError,                /* no error */
    PacketTooShort,         /* extract or lookahead ran past the end of the packet */
    NoMatch,                /* a select expression had no matching case */
    StackOutOfBounds,       /* .next past the end of a header stack, or .last on an empty one */
    HeaderTooShort,         /* a varbit extract asked for more bits than the field can hold */
    ParserTimeout,          /* the parser exceeded its time budget */
    ParserInvalidArgument   /* an operation got an argument it cannot use (e.g. a varbit size not a byte multiple) */
}

/* The packet as seen by a parser. */
extern packet_in {
    /* Read a fixed-size header from the packet and make it valid. */
    void extract<T>(out T hdr);
    /* Read a header with one varbit field whose size (in bits) is given. */
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /* Look at the next bits without consuming them. */
    T lookahead<T>();
    /* Skip this many bits. */
    void advance(in bit<32> sizeInBits);
    /* Length of the packet in bytes (not supported by every target). */
    bit<32> length();
}

/* The packet being built by a deparser. */
extern packet_out {
    /* Append a header (only if valid), or every valid element of a stack, struct or union. */
    void emit<T>(in T hdr);
}

/* In a parser: when check is false, set the parser error to toSignal and go to the reject state. */
extern void verify(in bool check, in error toSignal);

/* An action that does nothing: the usual default action. */
@noWarn("unused")
action NoAction() {}

/* Match kinds every architecture supports. */
match_kind {
    exact,      /* all bits equal */
    ternary,    /* equal under a mask */
    lpm         /* longest prefix */
}

/* Compile-time assertion: stops compilation with the message when check is false. */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif  /* _CORE_P4_ */
