"""The decoder half of the code generator (`writers.codec.codegen`), and the state both halves
share: the source lines being written and the namespace of constants they refer to.

Generated decoders check every bound explicitly and raise `RecordDecodeError` (bound in as `_err`)
naming the field and the byte offset.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from writers.codec.fields import FieldSpec, RecordSpec
from writers.codec.wire import (
    FIXED_FORMAT,
    GENERATED_NAMESPACE,
    MAX_STRING_BYTES,
    packer_for,
)

__all__ = ["DecoderSource", "SourceWriter"]


class SourceWriter:
    """The source of one record (type, version) being generated, and its namespace."""

    def __init__(self, spec: RecordSpec, version: int) -> None:
        self.spec = spec
        self.version = version
        self.label = f"{spec.type_name} v{version}"
        self.flexible = version in spec.flexible
        self.lines: list[str] = []
        self.ns: dict[str, Any] = dict(GENERATED_NAMESPACE)
        self._n = 0

    def compact(self, fs: FieldSpec) -> bool:
        """True when the field uses compact (uvarint) lengths at this version: the message is
        flexible and the field has no `flexibleVersions` of its own that says otherwise."""
        return self.flexible and (fs.flexible is None or self.version in fs.flexible)

    def const(self, value: Any, prefix: str = "_c") -> str:
        self._n += 1
        name = f"{prefix}{self._n}"
        self.ns[name] = value
        return name

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def sub_name(self, fs: FieldSpec, kind: str) -> str:
        self._n += 1
        return f"_{kind}_{fs.element_type}_{self._n}"


class DecoderSource(SourceWriter):
    """Writes the decoders of one record (type, version), nested structs included."""

    def decoder(self, fields: tuple[FieldSpec, ...], fname: str, owner: str) -> None:
        """Emit `def fname(b, p, L) -> (dict, p)` reading the struct from `b[p:L]`."""
        version = self.version
        nested: list[tuple[FieldSpec, str]] = []
        body: list[tuple[int, str]] = []

        def add(indent: int, line: str) -> None:
            body.append((indent, line))

        add(1, "d = {}")
        present = [fs for fs in fields if version in fs.versions]
        i = 0
        while i < len(present):
            fs = present[i]
            if version in fs.tagged:
                add(1, f"d[{fs.json_name!r}] = {self.const(fs.default_value())}"
                       + (".copy()" if isinstance(fs.default_value(), (list, dict)) else ""))
                i += 1
                continue
            if fs.type in FIXED_FORMAT:
                run = [fs]
                while (
                    i + len(run) < len(present)
                    and present[i + len(run)].type in FIXED_FORMAT
                    and version not in present[i + len(run)].tagged
                ):
                    run.append(present[i + len(run)])
                packer = packer_for("".join(FIXED_FORMAT[r.type] for r in run))
                s = self.const(packer, "_S")
                where = self.const(f"{owner}.{run[0].json_name}", "_W")
                add(1, f"if p + {packer.size} > L:")
                add(2, f"raise _err({where}, 'truncated (needs {packer.size} bytes)', p)")
                add(1, f"g = {s}.unpack_from(b, p)")
                for j, r in enumerate(run):
                    val = f"_ut(g[{j}])" if r.type == "uuid" else f"g[{j}]"
                    add(1, f"d[{r.json_name!r}] = {val}")
                add(1, f"p += {packer.size}")
                i += len(run)
                continue
            self.decode_value(fs, f"d[{fs.json_name!r}]", "L", 1, add, nested, owner)
            i += 1
        if not self.flexible:  # no tagged-field section in a non-flexible version
            add(1, "return d, p")
            self._emit_decoder(fname, body, nested, owner)
            return
        where = self.const(f"{owner} tagged fields", "_W")
        add(1, "if p >= L:")
        add(2, f"raise _err({where}, 'truncated', p)")
        add(1, "n = b[p]")
        add(1, "p += 1")
        add(1, "if n > 127:")
        add(2, f"n, p = _ruv(b, p - 1, L, {where})")
        add(1, "for _ in range(n):")
        add(2, f"tag, p = _ruv(b, p, L, {where})")
        add(2, f"size, p = _ruv(b, p, L, {where})")
        add(2, "te = p + size")
        add(2, "if te > L:")
        add(3, f"raise _err({where}, 'tagged field %d runs past the end' % tag, p)")
        tagged = [fs for fs in present if version in fs.tagged]
        kw = "if"
        for fs in tagged:
            add(2, f"{kw} tag == {fs.tag}:")
            self.decode_value(fs, f"d[{fs.json_name!r}]", "te", 3, add, nested, owner)
            add(3, "if p != te:")
            msg = self.const(f"tagged field {fs.json_name!r} used %d of its %d bytes")
            add(4, f"raise _err({where}, {msg} % (size - (te - p), size), p)")
            kw = "elif"
        if tagged:
            add(2, "else:")
            add(3, "d.setdefault(_UNK, []).append({'tag': tag, 'data': bytes(b[p:te])})")
            add(3, "p = te")
        else:
            add(2, "d.setdefault(_UNK, []).append({'tag': tag, 'data': bytes(b[p:te])})")
            add(2, "p = te")
        add(1, "return d, p")
        self._emit_decoder(fname, body, nested, owner)

    def _emit_decoder(
        self, fname: str, body: list[tuple[int, str]], nested: list[tuple[FieldSpec, str]],
        owner: str,
    ) -> None:
        for sub, sub_name in nested:
            self.decoder(sub.fields, sub_name, f"{owner}.{sub.json_name}[]")
        self.emit(0, f"def {fname}(b, p, L):")
        for indent, line in body:
            self.emit(indent, line)
        self.emit(0, "")

    def decode_value(
        self,
        fs: FieldSpec,
        target: str,
        end: str,
        ind: int,
        add: Callable[[int, str], None],
        nested: list[tuple[FieldSpec, str]],
        owner: str,
    ) -> None:
        """Emit code reading field `fs` (untagged wire form) at `p` into `target`."""
        where = self.const(f"{owner}.{fs.json_name}", "_W")
        t = fs.type
        if t in FIXED_FORMAT:
            packer = packer_for(FIXED_FORMAT[t])
            s = self.const(packer, "_S")
            add(ind, f"if p + {packer.size} > {end}:")
            add(ind + 1, f"raise _err({where}, 'truncated', p)")
            val = f"_ut({s}.unpack_from(b, p)[0])" if t == "uuid" else f"{s}.unpack_from(b, p)[0]"
            add(ind, f"{target} = {val}")
            add(ind, f"p += {packer.size}")
            return
        if fs.is_struct and not fs.is_array:
            sub = self.sub_name(fs, "dec")
            nested.append((fs, sub))
            add(ind, f"{target}, p = {sub}(b, p, {end})")
            return
        # length-prefixed: string, bytes, records, arrays. Compact: uvarint length + 1, 0 = null.
        # Otherwise int16 (string) or int32 length, -1 = null; shifted by one to share the code.
        if self.compact(fs):
            add(ind, f"if p >= {end}:")
            add(ind + 1, f"raise _err({where}, 'truncated', p)")
            add(ind, "n = b[p]")
            add(ind, "p += 1")
            add(ind, "if n > 127:")
            add(ind + 1, f"n, p = _ruv(b, p - 1, {end}, {where})")
        else:
            width, length_struct = (2, "_I16") if t == "string" else (4, "_I32")
            add(ind, f"if p + {width} > {end}:")
            add(ind + 1, f"raise _err({where}, 'truncated', p)")
            add(ind, f"n = {length_struct}.unpack_from(b, p)[0] + 1")
            add(ind, f"p += {width}")
            add(ind, "if n < 0:")
            add(ind + 1, f"raise _err({where}, 'negative length %d' % (n - 1), p - {width})")
        add(ind, "if n == 0:")
        if self.version in fs.nullable:
            add(ind + 1, f"{target} = None")
        else:
            add(ind + 1, f"raise _err({where}, 'null in a non-nullable field', p - 1)")
        add(ind, "else:")
        ind += 1
        add(ind, "n -= 1")
        if t in ("string", "bytes", "records"):
            if t == "string":
                add(ind, f"if n > {MAX_STRING_BYTES}:")
                add(ind + 1, f"raise _err({where}, 'string of %d bytes is too long' % n, p)")
            add(ind, "e = p + n")
            add(ind, f"if e > {end}:")
            add(ind + 1, f"raise _err({where}, 'length %d runs past the end' % n, p)")
            if t == "string":
                add(ind, f"{target} = _rstr(b, p, e, {where})")
            else:
                add(ind, f"{target} = bytes(b[p:e])")
            add(ind, "p = e")
            return
        el = fs.element_type
        if el in FIXED_FORMAT:
            code = FIXED_FORMAT[el]
            width = struct.calcsize(">" + code)
            add(ind, f"e = p + n * {width}")
            add(ind, f"if e > {end}:")
            add(ind + 1, f"raise _err({where}, 'array of %d runs past the end' % n, p)")
            if el == "int32":
                add(ind, f"{target} = list(_i32s(n).unpack_from(b, p))")
            elif el == "uuid":
                add(ind, f"{target} = [_ut(bytes(b[i:i + 16])) for i in range(p, e, 16)]")
            else:
                add(ind, f"{target} = list(_ast({code!r}, n).unpack_from(b, p))")
            add(ind, "p = e")
            return
        add(ind, f"if n > {end} - p:")
        add(ind + 1, f"raise _err({where}, 'array of %d runs past the end' % n, p)")
        add(ind, "a = []")
        add(ind, "for _ in range(n):")
        if el in ("string", "bytes"):
            elem = FieldSpec(fs.name, el, fs.versions)
            self.decode_value(elem, "x", end, ind + 1, add, nested, owner)
            add(ind + 1, "a.append(x)")
        else:
            sub = self.sub_name(fs, "dec")
            nested.append((fs, sub))
            add(ind + 1, f"x, p = {sub}(b, p, {end})")
            add(ind + 1, "a.append(x)")
        add(ind, f"{target} = a")
