#!/usr/bin/env python3
"""Flash bytes per component of a linked Cortex-M firmware, from its GNU ld map.

    targets/cortex-m/footprint.py build/cortex-m/mps2-an386/example/ea_cm_example.map

Sums the input sections kept after --gc-sections in the flash output sections
(.text, .rodata, .ARM.exidx, .init_array, and the .data load image), grouped by
the archive or object they came from. Used for docs/footprint.md."""
import re
import sys
from collections import defaultdict

FLASH_SECTIONS = {".isr_vector", ".text", ".rodata", ".ARM.extab", ".ARM.exidx", ".init_array", ".data"}


def component(path):
    m = re.search(r"lib([A-Za-z0-9_]+)\.a\(", path)
    if m:
        # A firmware's own runtime (ea_cm_add_firmware RUNTIME_DEFINES),
        # libedgeattn_runtime_<firmware>.a, counts as the runtime.
        if m.group(1).startswith("edgeattn_runtime_"):
            return "libedgeattn_runtime"
        return "lib" + m.group(1)
    # A firmware built with only some layer kinds (ea_cm_add_firmware KINDS)
    # has the runtime's kind table as an object of its own: runtime code.
    if re.search(r"_kinds\.dir/.*registry\.cc\.obj$", path):
        return "libedgeattn_runtime"
    return path.rsplit("/", 1)[-1]


def parse(map_path):
    sizes = defaultdict(lambda: defaultdict(int))
    text = open(map_path).read()
    body = text.split("Linker script and memory map", 1)[1]
    out_sec = None
    pending = None
    for line in body.splitlines():
        m = re.match(r"^(\.[A-Za-z_.]+|/DISCARD/)\s*(0x[0-9a-f]+)?", line)
        if m and not line.startswith(" "):
            out_sec = m.group(1)
            continue
        if out_sec not in FLASH_SECTIONS:
            continue
        m = re.match(r"^ (\S+)\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S.*)$", line)
        if m:
            sizes[component(m.group(4))][out_sec] += int(m.group(3), 16)
            pending = None
            continue
        m = re.match(r"^ (\.\S+)$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S.*)$", line)
        if m and pending:
            sizes[component(m.group(3))][out_sec] += int(m.group(2), 16)
            pending = None
    return sizes


def main():
    sizes = parse(sys.argv[1])
    print(f"{'component':32} {'text':>8} {'rodata':>8} {'other':>7} {'total':>8}")
    grand = 0
    for comp in sorted(sizes, key=lambda c: -sum(sizes[c].values())):
        s = sizes[comp]
        t, r = s.get(".text", 0), s.get(".rodata", 0)
        o = sum(s.values()) - t - r
        grand += t + r + o
        print(f"{comp:32} {t:8} {r:8} {o:7} {t + r + o:8}")
    print(f"{'total':32} {'':8} {'':8} {'':7} {grand:8}")


if __name__ == "__main__":
    main()
