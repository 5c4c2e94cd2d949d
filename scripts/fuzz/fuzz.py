#!/usr/bin/env python3
"""Seeded, structure-aware fuzzer of hayate's inputs, model files and data files.

Every case starts from a seed -- each shipped input under inputs/ (with its model file for ODE
inputs) and a few generated inputs that read data files (LAMMPS data, extended XYZ, CSV, PGM,
PNG) -- and applies one mutation of one class:

  delete, duplicate, type_swap, extreme_number, deep_nesting, huge_string, control_bytes,
  truncation, special_file, expression, set_override, data_file

It then runs `hayate check` and, when the input is accepted and stays small, a short
`hayate run` (steps capped with --set), each with a timeout, and asserts the contract:

  * no crash: no signal, no sanitizer report, no exit code other than 0, 2 and 3;
  * no hang: every process ends within its timeout;
  * every rejection (exit 2) names a position: each `error:` line starts with file:line:col
    (or the --set argument it blames; a file-level problem of the input file itself may name
    just the file);
  * `check` never fails at run time (exit 3), and no exit 3 leaks an internal error text;
  * `check` and `run` agree: an input `check` accepts (with the run's step caps) is not
    refused by `run` (exit 2);
  * every run that exits 0 wrote finite numbers only (no nan/inf in its CSV files);
  * nothing written is lost: no `.part` file is left behind by a run that ended (0 or 3).

The case list depends only on --seed and the case index, so `--cases 300 --seed 68` is the same
300 cases everywhere. Exit status: 0 when no case broke the contract, 1 otherwise.

Usage:
  scripts/fuzz/fuzz.py --binary build/openmp/hayate --cases 10000 --jobs 2      # the campaign
  scripts/fuzz/fuzz.py --binary build/openmp/hayate --cases 300 --seed 68       # the CI subset
  scripts/fuzz/fuzz.py ... --only 1234 --keep                                   # one case again

Python 3 standard library only.
"""

import argparse
import collections
import concurrent.futures
import json
import math
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import miniyaml as Y  # noqa: E402

CLASSES = ["delete", "duplicate", "type_swap", "extreme_number", "deep_nesting", "huge_string",
           "control_bytes", "truncation", "special_file", "expression", "set_override",
           "data_file"]

# Verdicts that break the contract (the exit status of the fuzzer) and those only counted.
FINDINGS = ["crash", "hang", "no_position", "check_exit3", "internal_error", "nonfinite_output",
            "data_loss", "check_run_disagree"]
COUNTED = ["accepted", "rejected", "run_ok", "run_rejected", "run_failed", "run_skipped"]

EXTREMES = ["0", "-0", "-1", "1", "0.5", "-0.5", "1e-308", "4.9e-324", "1e308", "-1e308", "1.8e308",
            "1e999", "-1e999", "nan", ".nan", "NaN", "inf", "-inf", ".inf", "-.inf", "Infinity",
            "2147483647", "2147483648", "-2147483649", "4294967296", "9223372036854775807",
            "9223372036854775808", "-9223372036854775809", "18446744073709551616",
            "99999999999999999999999999999999", "1e18", "9.2e18", "1e19", "123456789012345678901234567890e-20",
            "0x10", "0x1p3", "1_000", "1,5", "+5", "--5", "5e", "e5", ".", "-", "1e", "0.1e-400",
            "1e-400", "017", "1.0.0", " 3 ", "3 4", "true", "~", "null", ""]

SPECIALS = ["/dev/null", "/dev/zero", "/dev/urandom", "fifo", "directory", "missing", "empty",
            "sparse_huge", "symlink_loop", "self", "binary"]

# Keys whose growth makes a run expensive (not wrong): a mutation that enlarges one of them is
# checked, not run.
SIZE_KEYS = {"n", "nx", "ny", "cells", "members", "count", "steps", "t_end", "every",
             "fields_every", "thermo_every", "dump_every", "snapshot_every", "sample_every",
             "force_error_every", "force_error_sample", "leaf_size", "block", "pixels", "radius",
             "width", "height", "length", "average", "dt", "from", "to", "probability",
             "density", "value", "arrows", "i_per_thread", "members_per_thread", "split_sums"}

STEP_CAP = {"gravity": 3, "md": 3, "fhp": 3, "stream": 2}
ODE_STEPS = 2  # output intervals of an ODE run

POSITION = re.compile(r"^error: (?:.+?):(\d+):(\d+): ")
SET_POSITION = re.compile(r"^error: --set .*?: ")
INTERNAL = re.compile(r"std::|basic_|vector::|_M_|\bsto(?:i|l|ll|d|f)\b|bad conversion|"
                      r"invalid node|bad_array|bad_alloc|what\(\)|terminate|yaml-cpp|"
                      r"Kokkos::Impl|unknown exception", re.I)
SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|"
                       r"SUMMARY: UndefinedBehaviorSanitizer|AddressSanitizer:DEADLYSIGNAL")
NONFINITE = re.compile(r"(?i)^[+-]?(nan|inf|infinity)$")


# ---------------------------------------------------------------------------------------------
# Seeds

class Seed:
    """One starting point: the files of a case, which is the input, what each file is."""

    def __init__(self, name, problem, input_name):
        self.name = name
        self.problem = problem
        self.input_name = input_name
        self.files = collections.OrderedDict()  # name -> bytes
        self.kinds = {}  # name -> input | model | lammps | xyz | csv | pgm2 | pgm5 | png
        self.file_keys = []  # (dotted key of the input, file name it names)

    def add(self, name, data, kind):
        self.files[name] = data if isinstance(data, bytes) else data.encode()
        self.kinds[name] = kind


def fcc(cells, density, rng):
    a = (4.0 / density) ** (1.0 / 3.0)
    basis = [(0, 0, 0), (0.5, 0.5, 0), (0.5, 0, 0.5), (0, 0.5, 0.5)]
    atoms = []
    for i in range(cells):
        for j in range(cells):
            for k in range(cells):
                for b in basis:
                    atoms.append(tuple((c + o) * a for c, o in zip((i, j, k), b)))
    vel = [tuple(rng.gauss(0, 1.0) for _ in range(3)) for _ in atoms]
    return a * cells, atoms, vel


def png_bytes(width, height, pixels):
    """An 8-bit grey PNG of `pixels` (rows of ints)."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + bytes(row) for row in pixels)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def make_seeds(root):
    seeds = []
    for path in sorted((root / "inputs").glob("*/*.yaml")):
        if path.name.endswith(".model.yaml"):
            continue
        text = path.read_text()
        tree = Y.parse(text)
        problem = Y.get(tree, "problem").text
        seed = Seed("%s/%s" % (path.parent.name, path.stem), problem, path.name)
        seed.add(path.name, text, "input")
        model = Y.get(tree, "model.file")
        if model is not None:
            seed.add(model.text, (path.parent / model.text).read_text(), "model")
            seed.file_keys.append(("model.file", model.text))
        seeds.append(seed)

    rng = random.Random(2026)
    box, atoms, vel = fcc(4, 0.8442, rng)
    md_types = ("  types:\n    - {name: A, mass: 1.0, epsilon: 1.0, sigma: 1.0, cutoff: 2.5}\n"
                "  temperature: 1.0\n")
    md_rest = ("neighbor: {skin: 0.3, every: 10, check: true}\nrun: {steps: 20, dt: 0.005}\n"
               "output: {thermo_every: 5, dump_every: 10}\n")
    data = ["LAMMPS data file written by the hayate fuzzer", "", "%d atoms" % len(atoms),
            "1 atom types", ""] + ["0.0 %.17g %slo %shi" % (box, d, d) for d in "xyz"] + [
        "", "Masses", "", "1 1.0", "", "Atoms # atomic", ""]
    data += ["%d 1 %.17g %.17g %.17g" % ((i + 1,) + a) for i, a in enumerate(atoms)]
    data += ["", "Velocities", ""] + ["%d %.6g %.6g %.6g" % ((i + 1,) + v) for i, v in enumerate(vel)]
    s = Seed("gen/md_lammps_data", "md", "melt_data.yaml")
    s.add("melt_data.yaml", "problem: md\nsystem:\n  source: lammps_data\n  lammps_data:\n"
          "    file: melt.data\n" + md_types + md_rest, "input")
    s.add("melt.data", "\n".join(data) + "\n", "lammps")
    s.file_keys.append(("system.lammps_data.file", "melt.data"))
    seeds.append(s)

    xyz = ["%d" % len(atoms), 'Lattice="%.17g 0 0 0 %.17g 0 0 0 %.17g" '
           'Properties=species:S:1:pos:R:3:velo:R:3 pbc="T T T"' % (box, box, box)]
    xyz += ["A %.17g %.17g %.17g %.6g %.6g %.6g" % (a + v) for a, v in zip(atoms, vel)]
    s = Seed("gen/md_xyz", "md", "melt_xyz.yaml")
    s.add("melt_xyz.yaml", "problem: md\nsystem:\n  source: xyz\n  xyz:\n    file: melt.xyz\n"
          + md_types + md_rest, "input")
    s.add("melt.xyz", "\n".join(xyz) + "\n", "xyz")
    s.file_keys.append(("system.xyz.file", "melt.xyz"))
    seeds.append(s)

    grav = ("problem: gravity\nsolver: direct\nprecision: double\nsystem: {softening: 0.05}\n"
            "initial:\n  type: file\n  file: %s\ntime: {integrator: leapfrog, dt: 0.01}\n"
            "run: {steps: 10}\noutput: {every: 2, snapshot_every: 5}\n")
    parts = []
    for _ in range(64):
        parts.append([rng.uniform(-1, 1) for _ in range(3)] + [rng.gauss(0, 0.3) for _ in range(3)]
                     + [1.0 / 64])
    csv = ["x,y,z,vx,vy,vz,m"] + [",".join("%.17g" % v for v in p) for p in parts]
    s = Seed("gen/gravity_csv", "gravity", "cluster_csv.yaml")
    s.add("cluster_csv.yaml", grav % "cluster.csv", "input")
    s.add("cluster.csv", "\n".join(csv) + "\n", "csv")
    s.file_keys.append(("initial.file", "cluster.csv"))
    seeds.append(s)
    gx = ["%d" % len(parts), "Properties=species:S:1:pos:R:3:velo:R:3:mass:R:1 Time=0"]
    gx += ["X " + " ".join("%.17g" % v for v in p) for p in parts]
    s = Seed("gen/gravity_xyz", "gravity", "cluster_xyz.yaml")
    s.add("cluster_xyz.yaml", grav % "cluster.xyz", "input")
    s.add("cluster.xyz", "\n".join(gx) + "\n", "xyz")
    s.file_keys.append(("initial.file", "cluster.xyz"))
    seeds.append(s)

    w, h = 16, 8
    pix = [[0 if (x - 8) ** 2 + (y - 4) ** 2 * 2 < 20 else 255 for x in range(w)] for y in range(h)]
    fhp = ("problem: fhp\nsystem: {model: fhp3, nx: 64, ny: 32, density: 2.1, boundary_y: walls}\n"
           "run: {steps: 20}\nforcing: {probability: 0.001}\n"
           "obstacles:\n  - {type: mask, file: %s, x: 20, y: 12, threshold: 0.5}\n"
           "output: {every: 5, fields_every: 10, average: 5, block: 4, pixels: 2, arrows: 2}\n")
    p2 = "P2\n# fuzz mask\n%d %d\n255\n" % (w, h) + "\n".join(" ".join(map(str, r)) for r in pix) + "\n"
    p5 = ("P5\n%d %d\n255\n" % (w, h)).encode() + bytes(v for r in pix for v in r)
    for name, data, kind in [("mask_p2.pgm", p2, "pgm2"), ("mask_p5.pgm", p5, "pgm5"),
                             ("mask.png", png_bytes(w, h, pix), "png")]:
        stem = name.split(".")[0]
        s = Seed("gen/fhp_" + stem, "fhp", "channel_%s.yaml" % stem)
        s.add(s.input_name, fhp % name, "input")
        s.add(name, data, kind)
        s.file_keys.append(("obstacles", name))
        seeds.append(s)
    for s in seeds:
        s.trees = {}
        for name, data in s.files.items():
            if s.kinds[name] in ("input", "model"):
                s.trees[name] = Y.parse(data.decode())
    return seeds


# ---------------------------------------------------------------------------------------------
# Tree mutations

class Slot:
    """A place in a tree holding a value: parent[index] (list) or parent[index][1] (Map)."""

    def __init__(self, parent, index, path):
        self.parent, self.index, self.path = parent, index, path

    @property
    def is_map(self):
        return isinstance(self.parent, Y.Map)

    def get(self):
        return self.parent[self.index][1] if self.is_map else self.parent[self.index]

    def set(self, value):
        if self.is_map:
            self.parent[self.index][1] = value
        else:
            self.parent[self.index] = value

    def set_key(self, key):
        self.parent[self.index][0] = key

    def delete(self):
        del self.parent[self.index]

    def duplicate(self):
        item = self.parent[self.index]
        self.parent.insert(self.index + 1, [item[0], clone(item[1])] if self.is_map else clone(item))

    @property
    def key(self):
        return self.path.rsplit(".", 1)[-1]


def clone(v):
    if isinstance(v, Y.Map):
        return Y.Map([k, clone(x)] for k, x in v)
    if isinstance(v, list):
        return [clone(x) for x in v]
    if isinstance(v, Y.Scalar):
        return Y.Scalar(v.text, v.style)
    return v


def slots(tree, path=""):
    out = []
    if isinstance(tree, Y.Map):
        for i, (k, v) in enumerate(tree):
            p = (path + "." if path else "") + (k.text if isinstance(k, Y.Scalar) else "?")
            out.append(Slot(tree, i, p))
            out.extend(slots(v, p))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            p = "%s[%d]" % (path, i)
            out.append(Slot(tree, i, p))
            out.extend(slots(v, p))
    return out


def is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def scalar_slots(tree, numeric=False):
    out = [s for s in slots(tree) if isinstance(s.get(), Y.Scalar)]
    if numeric:
        nums = [s for s in out if is_number(s.get().text)]
        return nums or out
    return out


EXPR_KEYS = ("ddt", "term")


def expression_slots(tree):
    """Scalars of a model tree that hold expressions."""
    out = []
    for s in scalar_slots(tree):
        p = s.path
        if (p.endswith(".ddt") or p.endswith(".term") or ".algebraics." in p
                or (".parameters." in p and not is_number(s.get().text))):
            out.append(s)
    return out


def random_text(rng, size):
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ .-+*/()[]{},:#\"'"
    if size > 4096:
        block = "".join(rng.choice(alphabet) for _ in range(4096))
        return (block * (size // 4096 + 1))[:size]
    return "".join(rng.choice(alphabet) for _ in range(size))


def deep_value(rng, depth):
    kind = rng.randrange(4)
    if kind == 0:
        return Y.Raw("[" * depth + "1" + "]" * depth)
    if kind == 1:
        return Y.Raw("{a: " * depth + "1" + "}" * depth)
    if kind == 2:
        return Y.Raw("[" * depth)  # unclosed
    return Y.Raw("[{a: " * (depth // 2) + "1" + "}]" * (depth // 2))


CONTROL = ["\x00", "\x01", "\x07", "\x08", "\x1b[31m", "\x7f", "\r", "\t", "\x0b", "\x0c",
           "\ufeff", "\x85", "\u2028", "\udcff", "\x1b]0;title\x07"]
RAW_BYTES = [b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"\xc3\x28", b"\x1b[2J", b"\r", b"\x7f",
             b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\t"]


def pathological_expression(rng):
    """An expression text that stresses the model language's parser and its later passes."""
    d = rng.choice([50, 199, 200, 201, 1000, 4500, 30000, 100000])
    v = rng.choice(["V", "1", "t"])
    choices = [
        lambda: "(" * d + v + ")" * d,
        lambda: "-" * d + v,
        lambda: "!" * d + v,
        lambda: "exp(" * d + v + ")" * d,
        lambda: v + "^" + "^".join([v] * d),
        lambda: " - ".join([v] * d),
        lambda: "/".join([v] * d),
        lambda: "<".join([v] * d),
        lambda: "+".join(["1"] * rng.choice([1000, 8000, 20000, 200000])),
        lambda: "min(" + ",".join([v] * d) + ")",
        lambda: "if(" * d + "1,1,1" + ")" * d,
        lambda: "(" * d + v,
        lambda: v + ")" * 10,
        lambda: rng.choice(["1e999*V", "-1e999", "0x1p3", "nan", "inf", "V/0", "1/(V-V)",
                            "pow(V, 1e308)", "exp(1000)", "exp(V)^1e300", "log(0)", "sqrt(-1)",
                            "1e-400", "mod(V, 0)", "V^-1e308", "4.9e-324/4.9e-324"]),
        lambda: rng.choice(["foo(V)", "exp()", "exp(V, V)", "if(V, 1)", "min(V)", "pow(V)",
                            "V +", "((V", "V)", "", "   ", "V $ 2", "V \u00b7 2", "V,,V", "()",
                            "exp(", "1..2", "1e", ".e1", "V..x", "2V", "pre.V", "post.", "n_pre",
                            "V\x00+1", "V\x1b+1", "a" * 5000, "V" + " " * 100000]),
    ]
    return rng.choice(choices)()


def mutate_tree(rng, cls, tree, kind):
    """Applies one mutation of class `cls` to `tree` in place; returns (description, size_grew)."""
    all_slots = slots(tree)
    if not all_slots:
        return "empty tree", False
    if cls == "delete":
        s = rng.choice(all_slots)
        s.delete()
        return "delete %s" % s.path, False
    if cls == "duplicate":
        s = rng.choice(all_slots)
        s.duplicate()
        return "duplicate %s" % s.path, s.key in SIZE_KEYS or not s.is_map
    if cls == "type_swap":
        s = rng.choice(all_slots)
        v = s.get()
        if isinstance(v, Y.Scalar):
            new = rng.choice([[clone(v)], Y.Map([[Y.Scalar("x"), clone(v)]]), Y.Scalar(""),
                              Y.Scalar("true"), Y.Scalar("abc"), Y.Scalar("12", "double"),
                              Y.Scalar(v.text, "double"), Y.Map(), [], Y.Raw("~"),
                              Y.Raw("!!binary aGF5YXRl"), Y.Raw("&a 1"), Y.Raw("*nosuch")])
        else:
            new = rng.choice([Y.Scalar("1"), Y.Scalar("abc"), Y.Scalar(""), [] if isinstance(v, Y.Map) else Y.Map(),
                              list(clone(x[1]) for x in v) if isinstance(v, Y.Map) else
                              Y.Map([Y.Scalar("k%d" % i), clone(x)] for i, x in enumerate(v))])
        s.set(new)
        return "type_swap %s -> %s" % (s.path, Y.flow_text(new)[:40]), False
    if cls == "extreme_number":
        s = rng.choice(scalar_slots(tree, numeric=True))
        value = rng.choice(EXTREMES)
        s.set(Y.Scalar(value, "plain" if value.strip() == value and value else "double"))
        grew = s.key in SIZE_KEYS or "[" in s.path.rsplit(".", 1)[-1]
        return "extreme_number %s = %r" % (s.path, value), grew
    if cls == "deep_nesting":
        s = rng.choice(all_slots)
        depth = rng.choice([10, 100, 499, 500, 1000, 1999, 2000, 2500, 10000, 100000])
        s.set(deep_value(rng, depth))
        return "deep_nesting %s depth %d" % (s.path, depth), False
    if cls == "huge_string":
        s = rng.choice(all_slots)
        size = rng.choice([1000, 70000, 400000, 1 << 20, 4 << 20])
        text = random_text(rng, size)
        if rng.random() < 0.3 and s.is_map:
            s.set_key(Y.Scalar(text, "double"))
            return "huge_string key of %s (%d chars)" % (s.path, size), False
        s.set(Y.Scalar(text, "double"))
        return "huge_string %s (%d chars)" % (s.path, size), False
    if cls == "control_bytes":
        s = rng.choice(scalar_slots(tree))
        v = s.get()
        bad = "".join(rng.choice(CONTROL) for _ in range(rng.randint(1, 4)))
        at = rng.randint(0, len(v.text))
        text = v.text[:at] + bad + v.text[at:]
        if rng.random() < 0.3 and s.is_map:
            s.set_key(Y.Scalar(text, "double"))
            return "control_bytes key %s %r" % (s.path, bad), False
        s.set(Y.Scalar(text, "double"))
        return "control_bytes %s %r" % (s.path, bad), False
    if cls == "expression":
        targets = expression_slots(tree) if kind == "model" else []
        if not targets:
            return mutate_tree(rng, "extreme_number", tree, kind)
        s = rng.choice(targets)
        text = pathological_expression(rng)
        s.set(Y.Scalar(text, "double"))
        return "expression %s = %r" % (s.path, text[:60] + ("..." if len(text) > 60 else "")), False
    raise ValueError(cls)


def mutate_model_structure(rng, tree):
    """Network-level mutations of a model: counts, topologies, self-references."""
    net = Y.get(tree, "network")
    choice = rng.randrange(5)
    if choice == 0 and isinstance(net, list) and net and isinstance(net[0], Y.Map):
        count = rng.choice(["0", "-1", "1e7", "10000000", "1048577", "2147483648", "1e300", "2.5",
                            "100000"])
        for pair in net[0]:
            if pair[0].text == "count":
                pair[1] = Y.Scalar(count)
                break
        else:
            net[0].append([Y.Scalar("count"), Y.Scalar(count)])
        return "network[0].count = %s" % count, True
    conns = Y.get(tree, "connections")
    if choice == 1 and isinstance(conns, list) and conns and isinstance(conns[0], Y.Map):
        topo = rng.choice(["random", "all_to_all", "one_to_one", "ring", "line", "star", ""])
        conns[0].append([Y.Scalar("topology"), Y.Scalar(topo)])  # a duplicate key, or a new one
        conns[0].append([Y.Scalar("probability"), Y.Scalar(rng.choice(["0", "1", "-1", "2", "nan"]))])
        conns[0].append([Y.Scalar("seed"), Y.Scalar(rng.choice(["-1", "1e300", "0.5", "7"]))])
        return "connections[0] topology %s" % topo, False
    modules = Y.get(tree, "modules")
    if isinstance(modules, Y.Map) and modules and isinstance(modules[0][1], Y.Map):
        mod = modules[0][1]
        params = Y.get(mod, "parameters")
        if choice == 2 and isinstance(params, Y.Map) and params:
            name = params[0][0].text
            params[0][1] = Y.Scalar(rng.choice(["%s*2" % name, "%s + 1" % name,
                                                "q1", "%s" % name]), "double")
            params.append([Y.Scalar("q1"), Y.Scalar("%s*q1" % name, "double")])
            return "self-referencing parameter %s" % name, False
        algs = Y.get(mod, "algebraics")
        if choice == 3:
            chain = Y.Map()
            n = rng.choice([100, 3000, 30000])
            chain.append([Y.Scalar("z0"), Y.Scalar("1", "double")])
            for i in range(1, n):
                chain.append([Y.Scalar("z%d" % i), Y.Scalar("z%d + 1" % (i - 1), "double")])
            if isinstance(algs, Y.Map):
                algs.extend(chain)
            else:
                mod.append([Y.Scalar("algebraics"), chain])
            return "chain of %d algebraic variables" % n, True
    return "modules.first.states.V.init = 1e308", mutate_tree(rng, "extreme_number", tree, "model")[1]


# ---------------------------------------------------------------------------------------------
# Data-file mutations

def mutate_data(rng, data, kind):
    """One mutation of a data file's bytes (structure-aware where the format allows)."""
    if kind == "png":
        return mutate_png(rng, data)
    if kind == "pgm5" and rng.random() < 0.5:
        header_end = data.index(b"255\n") + 4
        header = data[:header_end].decode().split()
        field = rng.randrange(1, 4)
        header[field] = rng.choice(["0", "-1", "65536", "100000", "4294967297", "99999999999",
                                    "16", "9", "x"])
        return ("P5 header field %d = %s" % (field, header[field]),
                (" ".join(header) + "\n").encode() + data[header_end:])
    text = data.decode("latin-1")
    lines = text.split("\n")
    op = rng.randrange(7)
    if op == 0 and len(lines) > 1:
        i = rng.randrange(len(lines))
        del lines[i]
        desc = "delete line %d" % (i + 1)
    elif op == 1:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
        desc = "duplicate line %d" % (i + 1)
    elif op == 2:
        # A number token of an early line (counts, headers) or any line.
        head = min(len(lines), 12)
        i = rng.randrange(head) if rng.random() < 0.6 else rng.randrange(len(lines))
        tokens = re.split(r"([ ,]+)", lines[i])
        nums = [k for k, t in enumerate(tokens) if is_number(t)]
        k = rng.choice(nums) if nums else 0
        value = rng.choice(EXTREMES)
        tokens[k] = value
        lines[i] = "".join(tokens)
        desc = "line %d token %d = %r" % (i + 1, k, value)
    elif op == 3:
        i = rng.randrange(len(lines))
        lines[i] = rng.choice(["", "garbage here", "Atoms", "Masses", "Velocities # x",
                               "Properties=pos:R:3", "# comment", "\x00\x01", "1 2 3 4 5 6 7 8 9",
                               "x,y,z", "P5", "-", "\t\t", random_text(rng, 100000)])
        desc = "replace line %d" % (i + 1)
    elif op == 4:
        cut = rng.randrange(len(data) + 1)
        return "truncate at byte %d" % cut, data[:cut]
    elif op == 5:
        i = rng.randrange(min(len(lines), 4))
        lines[i] = lines[i].replace("Properties=", "Properties=" + rng.choice(
            ["species:S:2:", "name:S:1:", "pos:R:99999999999:", "bad", "x:I:1:", "species:S:1:"]), 1) \
            if "Properties=" in lines[i] else rng.choice(["-1", "1e20", "2147483648", "0"]) + \
            lines[i][len(lines[i].split(" ")[0]):]
        desc = "header line %d -> %r" % (i + 1, lines[i][:60])
    else:
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        return "flip bytes", bytes(b)
    return desc, "\n".join(lines).encode("latin-1")


def png_chunks(data):
    chunks, pos = [], 8
    while pos + 12 <= len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        chunks.append([data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]])
        pos += 12 + n
    return chunks


def png_join(chunks, fix_crc=True):
    out = b"\x89PNG\r\n\x1a\n"
    for kind, body in chunks:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF if fix_crc else 0
        out += struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)
    return out


def mutate_png(rng, data):
    chunks = png_chunks(data)
    op = rng.randrange(9)
    if op == 0:
        n = rng.randrange(0, 13)
        chunks[0][1] = chunks[0][1][:n]
        return "IHDR of %d bytes" % n, png_join(chunks)
    if op == 1:
        w, h = rng.choice([(0, 8), (16, 0), (65536, 65536), (2 ** 31 - 1, 2 ** 31 - 1), (2 ** 32 - 1, 1),
                           (1, 2 ** 32 - 1), (100000, 100000), (17, 8), (16, 9)])
        chunks[0][1] = struct.pack(">II", w, h) + chunks[0][1][8:]
        return "IHDR size %d x %d" % (w, h), png_join(chunks)
    if op == 2:
        field = rng.randrange(8, 13)
        body = bytearray(chunks[0][1])
        body[field] = rng.choice([0, 1, 2, 3, 4, 6, 7, 16, 255])
        chunks[0][1] = bytes(body)
        return "IHDR byte %d = %d" % (field, body[field]), png_join(chunks)
    if op == 3:
        del chunks[rng.randrange(len(chunks))]
        return "drop a chunk", png_join(chunks)
    if op == 4:
        chunks.insert(0, [b"IDAT", chunks[1][1]])
        return "IDAT before IHDR", png_join(chunks)
    if op == 5:
        chunks[1][1] = zlib.compress(b"\x05" * 200)
        return "bad filter bytes", png_join(chunks)
    if op == 6:
        # A chunk length larger than the file (with or without a CRC that matches).
        out = bytearray(png_join(chunks))
        out[8:12] = struct.pack(">I", rng.choice([0xFFFFFFFF, 0x7FFFFFFF, len(out), 14]))
        return "IHDR length field", bytes(out)
    if op == 7:
        chunks[0:1] = [chunks[0], [b"IHDR", chunks[0][1]]]
        return "two IHDR chunks", png_join(chunks)
    cut = rng.randrange(len(data) + 1)
    return "truncate at byte %d" % cut, data[:cut]


# ---------------------------------------------------------------------------------------------
# Cases

class Case:
    def __init__(self, index, cls, seed):
        self.index, self.cls, self.seed = index, cls, seed
        self.files = collections.OrderedDict(seed.files)
        self.input_arg = seed.input_name
        self.set_args = []
        self.special = None  # (name or path, kind) to create in the case folder
        self.input_special = False
        self.desc = ""
        self.target = seed.input_name
        self.runnable = True


def make_case(index, base_seed, seeds):
    rng = random.Random("%d:%d" % (base_seed, index))
    cls = CLASSES[index % len(CLASSES)]
    pool = seeds
    if cls == "expression":
        pool = [s for s in seeds if "model" in s.kinds.values()]
    elif cls == "data_file":
        pool = [s for s in seeds if any(k not in ("input", "model") for k in s.kinds.values())]
    seed = rng.choice(pool)
    case = Case(index, cls, seed)
    names = list(seed.files)
    tree_names = [n for n in names if seed.kinds[n] in ("input", "model")]
    data_names = [n for n in names if n not in tree_names]

    if cls in ("delete", "duplicate", "type_swap", "extreme_number", "deep_nesting", "huge_string",
               "control_bytes", "expression"):
        name = tree_names[-1] if cls == "expression" or (len(tree_names) > 1 and rng.random() < 0.5) \
            else seed.input_name
        case.target = name
        tree = clone(seed.trees[name])
        if cls == "control_bytes" and rng.random() < 0.4:
            data = seed.files[name]
            at = rng.randrange(len(data) + 1)
            raw = rng.choice(RAW_BYTES)
            case.files[name] = data[:at] + raw + data[at:]
            case.desc = "raw bytes %r at byte %d" % (raw, at)
            return case
        if cls == "expression" and rng.random() < 0.3:
            case.desc, grew = mutate_model_structure(rng, tree)
        else:
            case.desc, grew = mutate_tree(rng, cls, tree, seed.kinds[name])
        case.runnable = not grew
        case.files[name] = Y.dump(tree).encode("utf-8", "surrogatepass")
        return case
    if cls == "truncation":
        name = rng.choice(tree_names)
        data = seed.files[name]
        cut = rng.randrange(len(data)) if rng.random() < 0.7 else \
            rng.choice([m.end() for m in re.finditer(b"\n", data)] or [0])
        case.files[name] = data[:cut]
        case.target = name
        case.desc = "truncate %s at byte %d of %d" % (name, cut, len(data))
        return case
    if cls == "special_file":
        kind = rng.choice(SPECIALS)
        targets = ["<input>"] + [k for k, _ in seed.file_keys]
        target = rng.choice(targets)
        case.special = kind
        case.target = target
        special_name = "special.%s" % ("png" if "obstacles" in target and rng.random() < 0.5 else "dat")
        if kind in ("/dev/null", "/dev/zero", "/dev/urandom"):
            path = kind
        elif kind == "self":
            path = seed.input_name
        elif kind == "binary":
            path = "binary.dat"
        else:
            path = special_name
        if target == "<input>":
            if kind == "self":
                path = seed.input_name
            case.input_arg = path
            case.input_special = True
        elif target == "obstacles":
            case.set_args = []
            tree = clone(seed.trees[seed.input_name])
            obst = Y.get(tree, "obstacles")
            for pair in obst[0]:
                if pair[0].text == "file":
                    pair[1] = Y.Scalar(path, "double")
            case.files[seed.input_name] = Y.dump(tree).encode()
        else:
            tree = clone(seed.trees[seed.input_name])
            set_path(tree, target, Y.Scalar(path, "double"))
            case.files[seed.input_name] = Y.dump(tree).encode()
        case.special_path = path
        case.desc = "special_file %s -> %s" % (target, kind)
        return case
    if cls == "set_override":
        tree = seed.trees[seed.input_name]
        leaves = [s for s in slots(tree) if s.path != "problem"]
        n = rng.randint(1, 3)
        for _ in range(n):
            r = rng.random()
            if r < 0.1:
                arg = rng.choice(["=1", "nosuch.key=1", "system", "system.=1", ".n=1", "a..b=2",
                                  "system.n[0]=1", "problem=nosuch", "problem=", "run=1",
                                  "output.directory=\x1b[2J", "x" * 100000 + "=1",
                                  "system.n=" + "[" * 10000, "backend=cuda", "backend=metal"])
            else:
                s = rng.choice(leaves)
                path = re.sub(r"\[\d+\].*", "", s.path)
                value = rng.choice([rng.choice(EXTREMES), "[1, 2, 3]", "{a: 1}", "[" * 3000,
                                    "{", "'unterminated", "\"\\x00\"", random_text(rng, 70000),
                                    "!!binary aGF5", "*alias", "&anchor 1", "abc"])
                arg = "%s=%s" % (path, value)
                if path.rsplit(".", 1)[-1] in SIZE_KEYS:
                    case.runnable = False
            case.set_args += ["--set", arg]
        case.desc = "set " + " ".join(repr(a[:60]) for a in case.set_args[1::2])
        return case
    if cls == "data_file":
        name = rng.choice(data_names)
        case.target = name
        case.desc, case.files[name] = mutate_data(rng, seed.files[name], seed.kinds[name])
        case.desc = "%s: %s" % (name, case.desc)
        case.runnable = not re.search(r"header|IHDR size", case.desc)
        return case
    raise ValueError(cls)


def set_path(tree, dotted, value):
    node = tree
    parts = dotted.split(".")
    for part in parts[:-1]:
        nxt = Y.get(node, part)
        if not isinstance(nxt, Y.Map):
            nxt = Y.Map()
            node.append([Y.Scalar(part), nxt])
        node = nxt
    for pair in node:
        if pair[0].text == parts[-1]:
            pair[1] = value
            return
    node.append([Y.Scalar(parts[-1]), value])


# ---------------------------------------------------------------------------------------------
# Running a case

def write_case(case, folder):
    if folder.exists():
        shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, data in case.files.items():
        (folder / name).write_bytes(data)
    kind = case.special
    if kind:
        p = folder / case.special_path if not case.special_path.startswith("/") else None
        if p is None or kind == "self":
            pass
        elif kind == "fifo":
            os.mkfifo(str(p))
        elif kind == "directory":
            p.mkdir()
        elif kind == "missing":
            pass
        elif kind == "empty":
            p.write_bytes(b"")
        elif kind == "sparse_huge":
            with open(p, "wb") as f:
                f.truncate(3 << 30)  # no blocks: past every size limit, costs nothing
        elif kind == "symlink_loop":
            os.symlink(p.name, str(p))
        elif kind == "binary":
            p.write_bytes(bytes(range(256)) * 64)


def run(cmd, cwd, timeout, env):
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        rc = None
    return {"rc": rc, "seconds": round(time.monotonic() - start, 3),
            "output": out.decode("utf-8", "replace")}


def error_lines(output):
    return [l for l in output.split("\n") if l.startswith("error:")]


def positioned(output, case, set_used=None):
    """Whether every error line names a position (see the module's docstring)."""
    set_used = bool(case.set_args) if set_used is None else set_used
    lines = error_lines(output)
    if not lines:
        return False
    for line in lines:
        m = POSITION.match(line)
        if m and int(m.group(1)) >= 1 and int(m.group(2)) >= 1:
            continue
        if SET_POSITION.match(line) and set_used:
            continue
        if case.input_special and line.startswith("error: %s: " % case.input_arg):
            continue
        return False
    return True


def scan_outputs(folder):
    """(files with non-finite numbers, leftover .part files)."""
    bad, parts = [], []
    if not folder.exists():
        return bad, parts
    for path in folder.rglob("*"):
        if path.name.endswith(".part"):
            parts.append(path.name)
        elif path.suffix == ".csv" and path.is_file():
            with open(path, "r", errors="replace") as f:
                next(f, None)  # header
                for row in f:
                    if any(NONFINITE.match(tok.strip()) for tok in row.split(",")):
                        bad.append(path.name)
                        break
    return sorted(bad), sorted(parts)


def run_caps(case):
    """--set arguments that keep a run short, or None when the run is skipped."""
    seed = case.seed
    if seed.problem in STEP_CAP:
        return ["--set", "run.steps=%d" % STEP_CAP[seed.problem]]
    tree = seed.trees[seed.input_name]
    try:
        dt = float(Y.get(tree, "run.dt").text)
        every_node = Y.get(tree, "output.every")
        every = int(every_node.text) if every_node is not None else 100
    except (AttributeError, ValueError):
        return None
    t_end = dt * every * ODE_STEPS
    if not math.isfinite(t_end) or t_end <= 0:
        return None
    return ["--set", "run.t_end=%r" % t_end]


def execute(case, args, env):
    folder = Path(args.work) / ("case_%05d" % case.index)
    write_case(case, folder)
    result = {"case": case.index, "class": case.cls, "seed": case.seed.name, "target": case.target,
              "desc": case.desc, "verdicts": []}
    v = result["verdicts"]
    check = run([args.binary, "check", case.input_arg] + case.set_args, folder, args.timeout, env)
    result["check"] = summarize(check)

    def judge(r, phase, set_used=False):
        if r["rc"] is None:
            v.append("hang")
            return False
        if r["rc"] < 0 or r["rc"] not in (0, 2, 3) or SANITIZER.search(r["output"]):
            v.append("crash")
            return False
        if r["rc"] == 2 and not positioned(r["output"], case, set_used or bool(case.set_args)):
            v.append("no_position")
        if r["rc"] == 3:
            if phase == "check":
                v.append("check_exit3")
            if INTERNAL.search(r["output"]):
                v.append("internal_error")
        return True

    if judge(check, "check"):
        v.append("accepted" if check["rc"] == 0 else "rejected")
    caps = run_caps(case) if check["rc"] == 0 else None
    if check["rc"] == 0 and caps is not None and case.runnable and args.run_fraction > 0 and \
            random.Random("run:%d:%d" % (args.seed, case.index)).random() < args.run_fraction:
        out = folder / "out"
        r = run([args.binary, "run", case.input_arg, "--output", "out", "--quiet", "--threads", "1"]
                + case.set_args + caps, folder, args.run_timeout, env)
        result["run"] = summarize(r)
        if judge(r, "run", set_used=True):
            bad, parts = scan_outputs(out)
            if r["rc"] == 0:
                v.append("run_ok")
                if bad:
                    v.append("nonfinite_output")
                    result["nonfinite"] = bad
            elif r["rc"] == 2:
                v.append("run_rejected")
                # The run had its steps capped: `check` of that same input decides whether the
                # two disagree or the cap itself made the input invalid.
                capped = run([args.binary, "check", case.input_arg] + case.set_args + caps,
                             folder, args.timeout, env)
                result["capped_check"] = summarize(capped)
                if capped["rc"] == 0:
                    v.append("check_run_disagree")
            else:
                v.append("run_failed")
            if parts and r["rc"] in (0, 3):
                v.append("data_loss")
                result["parts"] = parts
    elif check["rc"] == 0:
        v.append("run_skipped")
    failed = any(x in FINDINGS for x in v)
    if not failed and not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    result["failed"] = failed
    return result


def summarize(r):
    out = r["output"]
    lines = out.split("\n")
    tail = "\n".join(l[:300] for l in lines[-12:])
    return {"rc": r["rc"], "seconds": r["seconds"], "tail": tail[-3000:]}


# ---------------------------------------------------------------------------------------------

def self_test(seeds, args, env):
    """Every seed, written back by miniyaml, must be accepted: else the mutations test nothing."""
    problems = []
    for seed in seeds:
        case = Case(-1, "seed", seed)
        for name, tree in seed.trees.items():
            case.files[name] = Y.dump(tree).encode()
        folder = Path(args.work) / "seed_check"
        write_case(case, folder)
        r = run([args.binary, "check", seed.input_name], folder, args.timeout, env)
        if r["rc"] != 0:
            problems.append("%s: %s" % (seed.name, r["output"].strip()[-500:]))
    shutil.rmtree(Path(args.work) / "seed_check", ignore_errors=True)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", required=True, help="the hayate executable")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=68)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per check")
    ap.add_argument("--run-timeout", type=float, default=60.0, help="seconds per run")
    ap.add_argument("--run-fraction", type=float, default=1.0,
                    help="fraction of accepted cases that are also run")
    ap.add_argument("--work", default="build/fuzz", help="scratch folder (failing cases stay)")
    ap.add_argument("--report", help="write every case's result here (JSON)")
    ap.add_argument("--only", type=int, nargs="*", help="run only these case numbers")
    ap.add_argument("--keep", action="store_true", help="keep every case folder")
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[2]),
                    help="the source tree (for inputs/)")
    args = ap.parse_args()
    args.binary = str(Path(args.binary).resolve())
    args.work = str(Path(args.work).resolve())
    Path(args.work).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false", LC_ALL="C")
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")

    seeds = make_seeds(Path(args.root))
    problems = self_test(seeds, args, env)
    if problems:
        print("seed self-test failed (miniyaml or a seed):\n" + "\n".join(problems))
        return 1
    indices = args.only if args.only else range(args.cases)
    started = time.monotonic()
    results = []
    # Cases are made in the workers (one at a time each): a case may hold megabytes of text.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for r in pool.map(lambda i: execute(make_case(i, args.seed, seeds), args, env), indices):
            results.append(r)
            if r["failed"]:
                print("FAIL case %d [%s] %s (%s): %s" % (r["case"], r["class"], r["seed"], r["desc"][:100],
                                                        ", ".join(x for x in r["verdicts"] if x in FINDINGS)))
                for phase in ("check", "run"):
                    if phase in r:
                        print("    %s rc=%s %.1fs: %s" % (phase, r[phase]["rc"], r[phase]["seconds"],
                                                        r[phase]["tail"].strip().replace("\n", "\n      ")[-1500:]))
    elapsed = time.monotonic() - started
    report(results, elapsed, args)
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"seed": args.seed, "cases": len(results), "seconds": round(elapsed, 1),
                       "results": results}, f, indent=1)
    return 1 if any(r["failed"] for r in results) else 0


def report(results, elapsed, args):
    table = collections.OrderedDict((c, collections.Counter()) for c in CLASSES)
    for r in results:
        t = table[r["class"]]
        t["cases"] += 1
        for v in r["verdicts"]:
            t[v] += 1
    cols = ["cases", "rejected", "accepted", "run_ok", "run_failed", "run_rejected"] + FINDINGS
    short = {"cases": "cases", "rejected": "exit2", "accepted": "ok", "run_ok": "run0",
             "run_failed": "run3", "run_rejected": "run2", "crash": "crash", "hang": "hang",
             "no_position": "nopos", "check_exit3": "chk3", "internal_error": "intern",
             "nonfinite_output": "nonfin", "data_loss": "loss", "check_run_disagree": "disagr"}
    print("\nhayate fuzz: seed %d, %d cases in %.0f s (%d jobs)" % (args.seed, len(results), elapsed, args.jobs))
    print("%-15s" % "class" + "".join("%7s" % short[c] for c in cols))
    total = collections.Counter()
    for cls, t in table.items():
        print("%-15s" % cls + "".join("%7d" % t[c] for c in cols))
        total.update(t)
    print("%-15s" % "total" + "".join("%7d" % total[c] for c in cols))
    failed = sum(1 for r in results if r["failed"])
    slowest = max((r.get("run", r["check"])["seconds"] for r in results), default=0)
    print("slowest process: %.1f s" % slowest)
    print("result: %s" % ("PASS" if not failed else "FAIL (%d cases)" % failed))


if __name__ == "__main__":
    sys.exit(main())
