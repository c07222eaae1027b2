#!/usr/bin/env python3
"""select_layers.py SPEC OUT NAME[,NAME...]: SPEC with only the named layers, written to OUT."""
import json
import sys

spec = json.load(open(sys.argv[1]))
names = sys.argv[3].split(",")
spec["layers"] = [layer for layer in spec["layers"] if layer["name"] in names]
missing = set(names) - {layer["name"] for layer in spec["layers"]}
if missing:
    sys.exit(f"select_layers.py: {sys.argv[1]} has no layer {', '.join(sorted(missing))}")
with open(sys.argv[2], "w") as f:
    json.dump(spec, f, indent=1)
