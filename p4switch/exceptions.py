"""Errors of the embedded target. Everything the target raises on bad input derives from `P4SwitchError`, so the
CLI can print one clear line (or a compiler diagnostic) and exit non-zero instead of a traceback."""

from __future__ import annotations

from dataclasses import dataclass


class P4SwitchError(Exception):
    """Base class of every error the embedded target reports to a user."""


@dataclass(frozen=True)
class SourceLocation:
    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    location: SourceLocation
    message: str
    severity: str = "error"
    source_line: str | None = None

    def render(self) -> str:
        text = f"{self.location}: {self.severity}: {self.message}"
        if self.source_line is not None:
            caret = " " * max(self.location.column - 1, 0) + "^"
            text += f"\n{self.source_line.rstrip()}\n{caret}"
        return text


class CompileError(P4SwitchError):
    """A P4 program is invalid. Carries compiler-quality diagnostics (`file:line:col: error: ...`)."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.render() for d in diagnostics))


class DeviceConfigError(P4SwitchError):
    """A device config (compiler output) is missing, unreadable or of another format."""


class SwitchStartError(P4SwitchError):
    """The switch cannot start: a missing interface, a busy gRPC port, unreadable pcap input, bad flags."""


class PacketProcessingError(P4SwitchError):
    """A packet made the pipeline fail in a way BMv2 would also report (for example a failed `assert`)."""
