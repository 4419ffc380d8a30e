"""The code generator behind `writers.codec.serde`: Python source for each record (type, version),
built from the schema table, compiled once and cached. What the generated code calls at run time
(uuids, structs, strings, tags, bounded reads) is `writers.codec.wire`.

Why code generation: Kafka's `MessageDataGenerator` turns each schema into a class that reads and
writes itself; here each (record type, version) gets functions generated from the table the first
time it is used. A generated encoder reads each field once, packs runs of fixed-width fields with
one precompiled `struct.Struct` and needs no per-field dispatch; records whose body is only
fixed-width fields, short int arrays and at most one short string are written by ONE `pack` of a
Struct cached per length shape (the common PartitionRecord/TopicRecord case); `encode_many` runs
the same body in a loop over a run of records with no Python call per record. That is what makes
encoding a million PartitionRecords affordable (benchmarks/encode.py). The table stays the only
description of the layout; `writers.generated_source()` shows what was built from it.

Generated decoders check every bound explicitly and raise `RecordDecodeError` naming the field and
the byte offset.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence

from writers.codec.codegen_decoders import DecoderSource
from writers.codec.fields import FieldSpec, RecordSpec
from writers.codec.records import FieldValue, MetadataRecord
from writers.codec.varint import uvarint
from writers.codec.wire import (
    FIXED_FORMAT,
    FRAME_VERSION,
    UNKNOWN_TAGS,
    packer_for,
)
from writers.errors import SchemaError

__all__ = ["Decoder", "Encoder", "ManyEncoder", "compile_record", "many_encoders"]

# ----------------------------------------------------------------------------- code generation


class _Gen(DecoderSource):
    """Generates the encoder and decoder source for one record (type, version), nested structs
    included, plus the namespace of constants it refers to (the decoders: `DecoderSource`)."""

    def encoder(
        self, fields: tuple[FieldSpec, ...], fname: str, owner: str
    ) -> list[tuple[int, str]]:
        """Emit `def fname(d, o)` appending the struct's encoding to bytearray `o`; return its
        body lines so the top level can also be inlined into the multi-record encoder."""
        version = self.version
        nested: list[tuple[FieldSpec, str]] = []
        body: list[tuple[int, str]] = []

        def add(indent: int, line: str) -> None:
            body.append((indent, line))

        # One set test covers the common case; only a record naming a field outside this
        # version (or an unknown one) pays for the detailed checks.
        in_version = frozenset(
            [fs.json_name for fs in fields if version in fs.versions] + [UNKNOWN_TAGS])
        known = frozenset([fs.json_name for fs in fields] + [UNKNOWN_TAGS])
        add(1, f"if not {self.const(in_version, '_K')}.issuperset(d):")
        k = self.const(known, "_K")
        msg = self.const(f"{owner}: unknown field(s) ")
        add(2, f"if not {k}.issuperset(d):")
        add(3, f"raise SchemaError({msg} + repr(sorted(set(d) - {k})))")
        for fs in fields:
            if version not in fs.versions and not fs.ignorable:
                add(2, f"v = d.get({fs.json_name!r}, {self.default_const(fs)})")
                add(2, f"if {self.nondefault(fs, 'v', out_of_version=True)}:")
                msg = self.const(
                    f"{owner}: field {fs.json_name!r} does not exist in version {version} "
                    f"(versions {fs.versions}) but holds a non-default value"
                )
                add(3, f"raise SchemaError({msg})")
        group: list[FieldSpec] = []

        def flush() -> None:
            if not group:
                return
            fmt = "".join(FIXED_FORMAT[g.type] for g in group)
            packer = self.const(packer_for(fmt), "_S")
            args = ", ".join(self.value_expr(g, fixed=True) for g in group)
            add(1, f"o += {packer}.pack({args})")
            group.clear()

        for fs in fields:
            if version not in fs.versions or version in fs.tagged:
                continue
            if fs.type in FIXED_FORMAT:
                group.append(fs)
                continue
            flush()
            add(1, f"v = {self.value_expr(fs, fixed=False)}")
            self.encode_value(fs, "v", "o", 1, add, nested, owner)
        flush()
        tagged = sorted(
            (fs for fs in fields if version in fs.versions and version in fs.tagged),
            key=lambda x: x.tag if x.tag is not None else -1,
        )
        if tagged:
            # Tagged fields are usually at their default: test that inline, and leave writing
            # them (and any preserved unknown tags) to a separate function.
            conds = [
                f"({self.nondefault(fs, 'v', first=self.get_expr(fs, walrus=True))})"
                for fs in tagged
            ]
            add(1, f"if {' or '.join(conds)} or _UNK in d:")
            add(2, f"{fname}_tags(d, o)")
            tag_body: list[tuple[int, str]] = []

            def add_tag(indent: int, line: str) -> None:
                tag_body.append((indent, line))

            add_tag(1, "t = []")
            for fs in tagged:
                add_tag(1, f"v = {self.get_expr(fs, walrus=False)}")
                add_tag(1, f"if {self.nondefault(fs, 'v')}:")
                add_tag(2, "b = bytearray()")
                self.encode_value(fs, "v", "b", 2, add_tag, nested, owner)
                add_tag(2, f"t.append(({fs.tag}, b))")
            add_tag(1, "_wt(o, t, d.get(_UNK))")
            self.emit(0, f"def {fname}_tags(d, o):")
            for indent, line in tag_body:
                self.emit(indent, line)
            self.emit(0, "")
        elif self.flexible:
            add(1, "if _UNK in d:")
            add(2, "_wt(o, [], d[_UNK])")
        if self.flexible:
            add(1, "else:")
            add(2, "o.append(0)")
        for sub, sub_name in nested:
            self.encoder(sub.fields, sub_name, f"{owner}.{sub.json_name}[]")
        self.emit(0, f"def {fname}(d, o):")
        for indent, line in body:
            self.emit(indent, line)
        self.emit(0, "")
        return body

    def flat(self, fields: tuple[FieldSpec, ...], prefix_len: int) -> list[tuple[int, str]]:
        """Fast-path lines setting `x` to the whole value (or None) with ONE `struct.pack`.

        Applies to records whose untagged fields are fixed-width, non-null int arrays or at most
        one non-null string: the lengths of the variable parts pick a cached Struct laid out for
        exactly those lengths (compact lengths < 127 only, so each is one byte), the frame prefix
        first and an empty tagged section last. Anything else (a tagged field set, unknown or
        out-of-version keys, long arrays) leaves `x` None and takes the general code.
        """
        if self.spec.kind not in ("metadata", "control"):
            return []  # protocol messages: few per second, the general code is enough
        version = self.version
        present = [fs for fs in fields if version in fs.versions and version not in fs.tagged]
        tagged = [fs for fs in fields if version in fs.versions and version in fs.tagged]
        items: list[tuple[str, str]] = []
        strings = 0
        for fs in present:
            nullable = version in fs.nullable
            if fs.type in FIXED_FORMAT:
                items.append(("fixed", FIXED_FORMAT[fs.type]))
            elif fs.is_array and fs.element_type in ("int8", "int16", "int32", "int64") and (
                not nullable
            ):
                items.append(("array", FIXED_FORMAT[fs.element_type]))
            elif fs.type == "string" and not nullable and strings == 0:
                items.append(("string", "s"))
                strings += 1
            else:
                return []
        lines: list[tuple[int, str]] = []
        keys = frozenset(fs.json_name for fs in present + tagged)
        cond = f"{self.const(keys, '_K')}.issuperset(d)"
        for fs in tagged:
            cond += f" and not ({self.nondefault(fs, 'v', first=self.get_expr(fs, walrus=True))})"
        lines.append((1, "x = None"))
        lines.append((1, f"if {cond}:"))
        var_names: list[str] = []
        args: list[str] = ["_PREFIX"]
        for fs, (kind, _code) in zip(present, items, strict=True):
            if kind == "fixed":
                args.append(self.value_expr(fs, fixed=True))
                continue
            name = f"a{len(var_names)}"
            if kind == "array":
                lines.append((2, f"{name} = {self.value_expr(fs, fixed=False)}"))
                args += [f"k[{len(var_names)}] + 1", f"*{name}"]
            else:
                lines.append((2, f"{name} = {self.value_expr(fs, fixed=False)}.encode()"))
                args += [f"k[{len(var_names)}] + 1", name]
            var_names.append(name)
        args.append("0")
        cache: dict[tuple[int, ...], struct.Struct | bool] = {}
        layout = tuple(items)

        def make(k: tuple[int, ...]) -> struct.Struct | bool:
            if len(cache) >= 4096:
                cache.clear()
            if any(n >= 127 for n in k):
                cache[k] = False
                return False
            lengths = iter(k)
            fmt = [f">{prefix_len}s"]
            for kind, code in layout:
                fmt.append(code if kind == "fixed" else f"B{next(lengths)}{code}")
            fmt.append("B")
            st = cache[k] = struct.Struct("".join(fmt))
            return st

        c = self.const(cache, "_FC")
        m = self.const(make, "_FM")
        key = "(" + "".join(f"len({n}), " for n in var_names) + ")"
        lines.append((2, f"k = {key}"))
        lines.append((2, f"st = {c}.get(k)"))
        lines.append((2, "if st is None:"))
        lines.append((3, f"st = {m}(k)"))
        lines.append((2, "if st:"))
        lines.append((3, f"x = st.pack({', '.join(args)})"))
        return lines

    def get_expr(self, fs: FieldSpec, *, walrus: bool) -> str:
        """`d.get(key, default)` for an optional field, optionally binding it to `v`."""
        expr = f"d.get({fs.json_name!r}, {self.default_const(fs)})"
        return f"(v := {expr})" if walrus else expr

    def default_const(self, fs: FieldSpec) -> str:
        """Name of a constant holding the field's default (an empty tuple for empty arrays, so
        generated code never shares a mutable default)."""
        value = fs.default_value()
        return self.const(() if isinstance(value, list) else value)

    def value_expr(self, fs: FieldSpec, *, fixed: bool) -> str:
        """Expression fetching the field from `d`: required, defaulted or nullable."""
        key = repr(fs.json_name)
        if fs.has_explicit_default or self.spec.kind in ("request", "response", "header"):
            # protocol messages, like Kafka's generated message classes, start from defaults
            expr = f"d.get({key}, {self.default_const(fs)})"
        elif self.version in fs.nullable:
            expr = f"d.get({key})"
        else:
            expr = f"d[{key}]"
        if fixed and fs.type == "uuid":  # the cache hit inline, the parse only on a miss
            return f"(_UBC.get(w := {expr}) or _ub(w))"
        return expr

    def nondefault(
        self, fs: FieldSpec, v: str, *, out_of_version: bool = False, first: str | None = None
    ) -> str:
        """A Python condition true when `v` differs from the field's default; `first`, if
        given, replaces the first (leftmost, so first evaluated) mention of `v`."""
        default = fs.default_value()
        if default is None:
            template = "{V} is not None"
        elif fs.is_array:
            template = "{V} is None or len(%s) != 0" % v
        elif out_of_version and fs.is_struct:
            template = "{V} != " + self.const(default)
        elif isinstance(default, bool):
            template = "{V} is not " + repr(default)
        else:
            template = "{V} != " + repr(default)
        return template.replace("{V}", first if first is not None else v, 1)

    def encode_value(
        self,
        fs: FieldSpec,
        v: str,
        o: str,
        ind: int,
        add: Callable[[int, str], None],
        nested: list[tuple[FieldSpec, str]],
        owner: str,
    ) -> None:
        """Emit code appending value `v` of field `fs` (untagged wire form) to bytearray `o`."""
        nullable = self.version in fs.nullable
        compact = self.compact(fs)
        if nullable and fs.type not in FIXED_FORMAT:
            add(ind, f"if {v} is None:")
            if compact:
                add(ind + 1, f"{o}.append(0)")
            else:  # int16 -1 for a string, int32 -1 for bytes, records and arrays
                null = b"\xff\xff" if fs.type == "string" else b"\xff\xff\xff\xff"
                add(ind + 1, f"{o} += {null!r}")
            add(ind, "else:")
            ind += 1
        t = fs.type
        if not compact and t in ("string", "bytes", "records"):
            if t == "string":
                add(ind, f"{o} += _es16({v})")
            else:
                add(ind, f"{o} += _I32.pack(len({v}))")
                add(ind, f"{o} += {v}")
            return
        if not compact and fs.is_array:
            add(ind, f"{o} += _I32.pack(len({v}))")
        if t in FIXED_FORMAT:
            packer = self.const(packer_for(FIXED_FORMAT[t]), "_S")
            conv = f"_ub({v})" if t == "uuid" else v
            add(ind, f"{o} += {packer}.pack({conv})")
        elif t == "string":
            add(ind, f"{o} += _es({v})")
        elif t in ("bytes", "records"):
            add(ind, f"{o} += _cl(len({v}))")
            add(ind, f"{o} += {v}")
        elif fs.is_array:
            el = fs.element_type
            add(ind, f"n = len({v})")
            if el == "int32" and compact:  # the hot case (replica lists): one pack
                add(ind, "if n < 127:")
                add(ind + 1, f"{o} += _I32C[n].pack(n + 1, *{v})")
                add(ind, "else:")
                add(ind + 1, f"{o} += _uvs(n + 1)")
                add(ind + 1, f"{o} += _i32s(n).pack(*{v})")
                return
            if compact:
                add(ind, f"{o} += _UV[n + 1] if n < 16383 else _uvs(n + 1)")
            if el == "uuid":
                add(ind, f"{o} += b''.join(map(_ub, {v}))")
            elif el in FIXED_FORMAT:
                add(ind, f"{o} += _ast({FIXED_FORMAT[el]!r}, len({v})).pack(*{v})")
            elif el == "string":
                add(ind, f"{o} += b''.join(map({'_es' if compact else '_es16'}, {v}))")
            elif el == "bytes":
                if not compact:
                    raise SchemaError(f"{owner}.{fs.json_name}: []bytes needs a flexible version")
                add(ind, f"for e in {v}:")
                add(ind + 1, f"{o} += _cl(len(e))")
                add(ind + 1, f"{o} += e")
            else:
                sub = self.sub_name(fs, "enc")
                nested.append((fs, sub))
                add(ind, f"for e in {v}:")
                add(ind + 1, f"{sub}(e, {o})")
        else:  # a single struct
            sub = self.sub_name(fs, "enc")
            nested.append((fs, sub))
            add(ind, f"{sub}({v}, {o})")


Encoder = Callable[[Mapping[str, FieldValue]], bytes]
Decoder = Callable[[bytes, int, int], tuple[dict[str, FieldValue], int]]
ManyEncoder = Callable[[Sequence[MetadataRecord], int, list[bytes]], int]
_compiled: dict[tuple[str, int], tuple[Encoder, Decoder, str]] = {}
many_encoders: dict[tuple[str, int], ManyEncoder] = {}
"""(type, version) -> its compiled `encode_many(records, i, out) -> next i`."""


def compile_record(spec: RecordSpec, version: int) -> tuple[Encoder, Decoder, str]:
    """(encode(data) -> bytes, decode(buf, pos, end) -> (data, pos), source) for one record
    type and version, generated and compiled on first use."""
    key = (spec.type_name, version)
    hit = _compiled.get(key)
    if hit is not None:
        return hit
    gen = _Gen(spec, version)
    body = gen.encoder(spec.fields, "_enc_body", gen.label)
    gen.decoder(spec.fields, "_dec_body", gen.label)
    if spec.kind == "metadata":
        prefix = uvarint(FRAME_VERSION) + uvarint(spec.api_key) + uvarint(version)
    else:
        prefix = b""
    gen.ns["_PREFIX"] = prefix
    flat = gen.flat(spec.fields, len(prefix))
    # the top-level body inlined twice: one record, and a loop over many (no call per record)
    gen.emit(0, "def encode(d):")
    for indent, line in flat:
        gen.emit(indent, line)
    if flat:
        gen.emit(1, "if x is not None:")
        gen.emit(2, "return x")
    gen.emit(1, "o = bytearray(_PREFIX)")
    for indent, line in body:
        gen.emit(indent, line)
    gen.emit(1, "return bytes(o)")
    gen.emit(0, "")
    # encode_many(records, i, out): encode records[i:] while they have this type and version,
    # appending to `out`; returns the index of the first record it did not encode
    gen.ns["_TYPE"], gen.ns["_VERSION"] = spec.type_name, version
    gen.emit(0, "def encode_many(rs, i, out):")
    gen.emit(1, "ap = out.append")
    # not `n`: the inlined body uses `n` for array lengths (a record with a 2-element array
    # would move the loop's bound; seen as an IndexError on a one-record batch)
    gen.emit(1, "n_rs = len(rs)")
    gen.emit(1, "while i < n_rs:")
    gen.emit(2, "r = rs[i]")
    gen.emit(2, "if r.version != _VERSION or r.type != _TYPE:")
    gen.emit(3, "return i")
    gen.emit(2, "i += 1")
    gen.emit(2, "d = r.data")
    for indent, line in flat:
        gen.emit(indent + 1, line)
    if flat:
        gen.emit(2, "if x is not None:")
        gen.emit(3, "ap(x)")
        gen.emit(3, "continue")
    gen.emit(2, "o = bytearray(_PREFIX)")
    for indent, line in body:
        gen.emit(indent + 1, line)
    gen.emit(2, "ap(bytes(o))")
    gen.emit(1, "return i")
    source = "\n".join(gen.lines) + "\n"
    code = compile(source, f"<zk2kraft codec {gen.label}>", "exec")
    exec(code, gen.ns)  # noqa: S102 - source generated above from the schema table only
    many_encoders[key] = gen.ns["encode_many"]
    result = (gen.ns["encode"], gen.ns["_dec_body"], source)
    _compiled[key] = result
    return result


