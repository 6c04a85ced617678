"""The control-plane view of a program: what P4Info describes, in p4c's order, before ids are assigned.

The elaborator fills it from the typed program; `p4switch.p4info` turns it into a P4Info message. Keeping it a plain
data model lets P4Info generation be tested without the parser, and keeps p4c's ordering rules in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MATCH_TYPES = ("exact", "lpm", "ternary", "range", "optional")


@dataclass
class Param:
    name: str
    bitwidth: int
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)
    type_name: str | None = None


@dataclass
class Action:
    name: str
    params: list[Param] = field(default_factory=list)
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)


@dataclass
class MatchField:
    name: str
    bitwidth: int
    match_kind: str  # exact, lpm, ternary, range, optional, or another (other_match_type)
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)
    type_name: str | None = None


@dataclass
class ActionRef:
    action: str
    annotations: list[str] = field(default_factory=list)

    @property
    def scope(self) -> str:
        names = {a.split("(")[0].lstrip("@") for a in self.annotations}
        if "tableonly" in names:
            return "TABLE_ONLY"
        if "defaultonly" in names:
            return "DEFAULT_ONLY"
        return "TABLE_AND_DEFAULT"


@dataclass
class DefaultAction:
    action: str
    args: list[tuple[int, int]]  # (value, bitwidth) per parameter, in order
    is_const: bool


@dataclass
class Table:
    name: str
    match_fields: list[MatchField]
    action_refs: list[ActionRef]
    default_action: DefaultAction | None
    size: int = 1024
    is_const: bool = False
    has_entries: bool = False
    direct_counter: str | None = None
    direct_meter: str | None = None
    supports_timeout: bool = False
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)
    implementation: str | None = None


@dataclass
class ActionProfile:
    """A v1model `action_profile` or `action_selector`, declared or constructed in a table's `implementation`.

    `inline` ones are emitted by p4c while it serializes the table; `table_ids` are filled from the tables whose
    `implementation` names this profile."""

    name: str
    with_selector: bool
    size: int
    max_group_size: int = 0
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)
    algorithm: str = ""  # v1model HashAlgorithm member of a selector
    output_width: int = 0
    size_semantics: str = ""  # "", "sum_of_weights" or "sum_of_members"
    max_member_weight: int = 0


@dataclass
class Counter:
    name: str
    unit: str  # PACKETS, BYTES, BOTH
    size: int = 0
    direct_table: str | None = None
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)


@dataclass
class Meter:
    name: str
    unit: str  # PACKETS, BYTES
    size: int = 0
    direct_table: str | None = None
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)


@dataclass
class TypeSpec:
    """A P4DataTypeSpec subset: bit<W>/int<W>/bool, or a named struct/header/serializable enum/new type."""

    kind: str  # "bit", "int", "bool", "struct", "header", "serializable_enum", "new_type", "tuple"
    bitwidth: int = 0
    name: str = ""
    members: list[TypeSpec] = field(default_factory=list)


@dataclass
class Register:
    name: str
    type_spec: TypeSpec
    size: int
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)


@dataclass
class Digest:
    name: str
    type_spec: TypeSpec
    explicit_id: int | None = None


@dataclass
class ControllerHeader:
    name: str  # the @controller_header string
    type_name: str  # the P4 header type name (the symbol)
    fields: list[Param]
    annotations: list[str] = field(default_factory=list)
    explicit_id: int | None = None


@dataclass
class ValueSet:
    name: str
    size: int
    match: list[MatchField]
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)


@dataclass
class StructInfo:
    """A named struct or header for type_info: members are (name, TypeSpec)."""

    name: str
    is_header: bool
    members: list[tuple[str, TypeSpec]]


@dataclass
class SerEnumInfo:
    name: str
    bitwidth: int
    members: list[tuple[str, int]]


@dataclass
class NewTypeInfo:
    name: str
    bitwidth: int
    translation: tuple[str, int] | None = None  # (uri, controller bitwidth) from @p4runtime_translation


@dataclass
class ControlPlane:
    """Everything P4Info lists, each list in p4c's emission order."""

    tables: list[Table] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    counters: list[Counter] = field(default_factory=list)
    meters: list[Meter] = field(default_factory=list)
    registers: list[Register] = field(default_factory=list)
    digests: list[Digest] = field(default_factory=list)
    controller_headers: list[ControllerHeader] = field(default_factory=list)
    value_sets: list[ValueSet] = field(default_factory=list)
    action_profiles: list[ActionProfile] = field(default_factory=list)
    structs: dict[str, StructInfo] = field(default_factory=dict)
    ser_enums: dict[str, SerEnumInfo] = field(default_factory=dict)
    new_types: dict[str, NewTypeInfo] = field(default_factory=dict)
    type_info_used: bool = False  # p4c emits an empty `type_info {}` once any code path touched it
    pkg_annotations: list[str] = field(default_factory=list)
    pkg_fields: dict[str, str] = field(default_factory=dict)
