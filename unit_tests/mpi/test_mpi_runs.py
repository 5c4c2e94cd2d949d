#!/usr/bin/env python3
"""Runs on several ranks against runs on one (ctest -L mpi): `mpirun -np R hayate run` of small
inputs must write the same bytes as a plain run, restart on any rank count, and refuse what
cannot run distributed once, with exit 2. Stdlib only."""
import argparse
import filecmp
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

FHP = """problem: fhp
system: {model: fhp3, nx: 128, ny: 36, density: 2.1, seed: 3, boundary_y: walls}
run: {steps: 240}
init: {velocity: [0.2, 0.05]}
forcing: {probability: 0.001}
obstacles:
  - {type: circle, x: 40, y: 17, radius: 6}
output: {every: 10, fields_every: 100, average: 50, sample_every: 5, block: 8}
checkpoint: {at_end: true}
"""

ODE = """problem: ode
model: {file: MODEL}
run: {method: rk4, dt: 0.01, t_end: 40.0}
ensemble:
  members: 7
  sweep:
    - {parameter: lr91.g_si, from: 0.05, to: 0.12}
  initial:
    - {state: lr91.V, from: -84.0, to: -80.0}
output: {every: 50, dump_every: 10, variables: [lr91.V, lr91.I_si], members: [0, 3, 6]}
checkpoint: {at_end: true}
"""

MD = """problem: md
precision: double
system:
  lattice: {density: 0.8442, cells: [8, 8, 8], types: [A]}
  temperature: 3.0
  types:
    - {name: A, mass: 1.0, epsilon: 1.0, sigma: 1.0, cutoff: 2.5}
neighbor: {skin: 0.3, every: 20, check: false}
run: {steps: 100, dt: 0.005}
output: {thermo_every: 10, dump_every: 50}
checkpoint: {at_end: true}
"""

failures = []


def skip(what, why):
    print(f"skip {what}: {why}", flush=True)


def check(ok, what, detail=""):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        if detail:
            print("     " + detail.strip()[-2000:].replace("\n", "\n     "), flush=True)
        failures.append(what)


class Runner:
    def __init__(self, binary, mpirun, work):
        self.binary, self.work = binary, work
        self.mpirun = [mpirun, "--oversubscribe"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            self.mpirun.append("--allow-run-as-root")
        # Shared-memory messages by copy in and out: the single-copy mechanism (CMA) needs a
        # ptrace permission that containers often withhold, and the tests need no speed.
        self.env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false",
                        OMPI_MCA_btl_vader_single_copy_mechanism="none")
        # A GPU build runs the same cases on its GPU (ranks sharing it); what a GPU refuses
        # (one force array per thread) is skipped there, by name.
        _, info, _ = self.run(0, ["info"])
        self.gpu = re.search(r"^default backend: (cuda|hip|sycl)$", info, re.M) is not None

    def run(self, ranks, args, timeout=300):
        """ranks 0: the plain binary, no launcher."""
        cmd = ([] if ranks == 0 else self.mpirun + ["-np", str(ranks)]) + [self.binary] + args
        p = subprocess.run(cmd, cwd=self.work, env=self.env, capture_output=True, text=True,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def run_cmd(self, cmd, timeout=300):
        p = subprocess.run(cmd, cwd=self.work, env=self.env, capture_output=True, text=True,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def hayate_run(self, ranks, inp, out, *sets):
        args = ["run", inp, "--threads", "1", "--quiet", "--output", out]
        for s in sets:
            args += ["--set", s]
        return self.run(ranks, args)


def same_files(work, a, b, names):
    """The names that differ; a checkpoint is compared by its entries, its parts joined."""
    def same(n):
        pa, pb = os.path.join(work, a, n), os.path.join(work, b, n)
        if n == "checkpoint.bin":
            return read_checkpoint(pa) == read_checkpoint(pb)
        return filecmp.cmp(pa, pb, shallow=False)
    return [n for n in names if not same(n)]


def part_files(folder):
    return sorted(f for f in os.listdir(folder) if f.startswith("checkpoint.bin.r"))


def errors(stderr):
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def fhp_cases(r):
    with open(os.path.join(r.work, "fhp.yaml"), "w") as f:
        f.write(FHP)
    files = ["fields.csv", "checkpoint.bin", "fields_00000100.vtk", "fields_00000200_profile.csv",
             "fields_final.vtk", "fields_final.png"]
    for kernel in ["bits", "bytes_wide"]:
        one = f"fhp1_{kernel}"
        rc, _, err = r.hayate_run(0, "fhp.yaml", one, f"tuning.kernel={kernel}")
        check(rc == 0, f"fhp {kernel}: one rank runs", err)
        for ranks in [1, 2, 3, 4]:
            out = f"fhp{ranks}r_{kernel}"
            rc, _, err = r.hayate_run(ranks, "fhp.yaml", out, f"tuning.kernel={kernel}")
            check(rc == 0, f"fhp {kernel}: {ranks} ranks run", err)
            if rc == 0:
                diff = same_files(r.work, one, out, files)
                parts = part_files(os.path.join(r.work, out))
                check(not diff and len(parts) == (ranks if ranks > 1 else 0),
                      f"fhp {kernel}: {ranks} ranks write the bytes of one rank, the "
                      f"checkpoint in {ranks if ranks > 1 else 'no'} part files (differ: {diff}; "
                      f"parts: {parts})")
    # A checkpoint written by 3 ranks continues on 2 and on 1 to the one-rank run's end.
    rc, _, _ = r.hayate_run(3, "fhp.yaml", "fhp_half", "run.steps=130", "tuning.kernel=bits")
    check(rc == 0, "fhp: 3 ranks write a checkpoint at step 130")
    for ranks in [0, 2]:
        out = f"fhp_restart{ranks}"
        rc, _, err = r.hayate_run(ranks, "fhp.yaml", out, "tuning.kernel=bits",
                                  "checkpoint.restart=fhp_half/checkpoint.bin")
        check(rc == 0 and not same_files(r.work, "fhp1_bits", out,
                                         ["checkpoint.bin", "fields_final.vtk"]),
              f"fhp: the 3-rank checkpoint restarts on {max(ranks, 1)} rank(s) bitwise", err)
    # Too few rows for the ranks: refused once, at the key, exit 2.
    rc, _, err = r.hayate_run(4, "fhp.yaml", "fhp_small", "system.ny=6", "output.block=1")
    check(rc == 2 and len(errors(err)) == 1 and "system.ny" in err and "give at least 8" in err,
          f"fhp: 6 rows on 4 ranks refused once with exit 2 (rc {rc}: {errors(err)})")


def read_csv(path):
    with open(path) as f:
        return [line.strip().split(",") for line in f]


def ode_cases(r, source_dir):
    model = os.path.join(source_dir, "inputs", "ode", "lr91.model.yaml")
    with open(os.path.join(r.work, "ode.yaml"), "w") as f:
        f.write(ODE.replace("MODEL", model))
    files = ["trace.csv", "states.bin", "checkpoint.bin"]
    for method, mode in [("euler", "fused"), ("rk4", "phases"), ("rk4", "reference")]:
        sets = [f"run.method={method}", f"tuning.mode={mode}"]
        one = f"ode1_{method}_{mode}"
        rc, _, err = r.hayate_run(0, "ode.yaml", one, *sets)
        check(rc == 0, f"ode {method} {mode}: one rank runs", err)
        for ranks in [2, 3, 7]:
            out = f"ode{ranks}_{method}_{mode}"
            rc, _, err = r.hayate_run(ranks, "ode.yaml", out, *sets)
            check(rc == 0 and not same_files(r.work, one, out, files),
                  f"ode {method} {mode}: 7 members on {ranks} ranks write the bytes of one rank",
                  err)
    # rk45 takes one step for all members from the error summed over the ranks: summed in
    # another order, it agrees to well within its tolerance, not bitwise.
    rc1, _, _ = r.hayate_run(0, "ode.yaml", "ode1_rk45", "run.method=rk45")
    rc3, _, err = r.hayate_run(3, "ode.yaml", "ode3_rk45", "run.method=rk45")
    ok = rc1 == 0 and rc3 == 0
    if ok:
        a = read_csv(os.path.join(r.work, "ode1_rk45", "trace.csv"))
        b = read_csv(os.path.join(r.work, "ode3_rk45", "trace.csv"))
        ok = len(a) == len(b) and a[0] == b[0] and all(
            abs(float(x) - float(y)) <= 1e-6 * max(1.0, abs(float(x)))
            for ra, rb in zip(a[1:], b[1:]) for x, y in zip(ra, rb))
    check(ok, "ode rk45: 3 ranks within 1e-6 of one rank", err)
    # A checkpoint of 3 ranks continues on 1, 2 and 4 to the bytes of the one-rank run.
    rc, _, _ = r.hayate_run(3, "ode.yaml", "ode_half", "run.t_end=20", "run.method=rk4",
                            "tuning.mode=phases")
    for ranks in [0, 2, 4]:
        out = f"ode_restart{ranks}"
        shutil.copytree(os.path.join(r.work, "ode_half"), os.path.join(r.work, out))
        rc, _, err = r.hayate_run(ranks, "ode.yaml", out, "run.method=rk4", "tuning.mode=phases",
                                  "checkpoint.restart=ode_half/checkpoint.bin")
        check(rc == 0 and not same_files(r.work, "ode1_rk4_phases", out, files),
              f"ode: the 3-rank checkpoint continues on {max(ranks, 1)} rank(s) to the same "
              "trace, dumps and checkpoint", err)
    rc, _, err = r.hayate_run(8, "ode.yaml", "ode_eight")
    check(rc == 2 and len(errors(err)) == 1 and "ensemble.members" in err,
          f"ode: 7 members on 8 ranks refused once with exit 2 (rc {rc}: {errors(err)})")
    # A blow-up in one rank's members stops every rank with one message and exit 3, and the
    # trace keeps the rows before it.
    rc, _, err = r.hayate_run(3, "ode.yaml", "ode_blowup", "run.dt=0.02")
    check(rc == 3 and len(errors(err)) == 1 and "member 5" in err and
          len(read_csv(os.path.join(r.work, "ode_blowup", "trace.csv"))) > 2,
          f"ode: a blow-up of member 5 on 3 ranks: one message, exit 3, the trace kept "
          f"(rc {rc}: {errors(err)})")


def read_container(path):
    """(problem, {entry name: bytes}) of one hayate checkpoint file (core/run/checkpoint.cpp)."""
    with open(path, "rb") as f:
        data = f.read()
    at = 12  # magic, format version

    def u64():
        nonlocal at
        (v,) = struct.unpack_from("<Q", data, at)
        at += 8
        return v

    def chunk():
        nonlocal at
        n = u64()
        at += n
        return data[at - n:at]

    problem = chunk()
    entries = {}
    for _ in range(u64()):
        name = chunk().decode()
        entries[name] = chunk()
    return problem, entries


def fnv1a(data):
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) % (1 << 64)
    return h


def write_manifest(path, names, generation):
    """A manifest naming `names` as its parts (sizes and checksums 0), nothing split."""
    def chunk(b):
        return struct.pack("<Q", len(b)) + b
    parts = struct.pack("<QQ", generation, len(names))
    for n in names:
        parts += chunk(n.encode()) + struct.pack("<QQ", 0, 0)
    parts += struct.pack("<Q", 0)
    data = b"HAYATECK" + struct.pack("<I", 1) + chunk(b"fhp") + struct.pack("<Q", 1)
    data += chunk(b"hayate.parts") + chunk(parts)
    with open(path, "wb") as f:
        f.write(data + struct.pack("<Q", fnv1a(data)))


def write_container(path, problem, entries):
    """Writes a checkpoint container of `entries` ({name: bytes}, in order) with its checksum."""
    def chunk(b):
        return struct.pack("<Q", len(b)) + b
    data = b"HAYATECK" + struct.pack("<I", 1) + chunk(problem) + struct.pack("<Q", len(entries))
    for name, value in entries.items():
        data += chunk(name.encode()) + chunk(value)
    data += struct.pack("<Q", fnv1a(data))
    with open(path, "wb") as f:
        f.write(data)
    return data


def read_manifest(manifest):
    """(problem, shared entries, generation, parts [[name, size, checksum]], split entries
    [[name, record bytes, blocks, [records per part]]]) of a checkpoint's manifest."""
    problem, entries = read_container(manifest)
    data, at = entries.pop("hayate.parts"), 0

    def u64():
        nonlocal at
        (v,) = struct.unpack_from("<Q", data, at)
        at += 8
        return v

    def name():
        nonlocal at
        n = u64()
        at += n
        return data[at - n:at].decode()

    generation, count = u64(), u64()
    parts = [[name(), u64(), u64()] for _ in range(count)]
    splits = [[name(), u64(), u64(), [u64() for _ in range(count)]] for _ in range(u64())]
    return problem, entries, generation, parts, splits


def write_manifest_of(manifest, problem, entries, generation, parts, splits):
    def chunk(b):
        return struct.pack("<Q", len(b)) + b
    data = struct.pack("<QQ", generation, len(parts))
    for name, size, checksum in parts:
        data += chunk(name.encode()) + struct.pack("<QQ", size, checksum)
    data += struct.pack("<Q", len(splits))
    for name, record, blocks, counts in splits:
        data += chunk(name.encode()) + struct.pack("<QQ", record, blocks)
        data += b"".join(struct.pack("<Q", c) for c in counts)
    write_container(manifest, problem, {**entries, "hayate.parts": data})


def rewrite_part(manifest, rank, change):
    """Applies change({name: bytes}, splits) to part `rank` of a checkpoint (splits: the
    manifest's split entries, which it may change too) and writes the part and the manifest
    again: a checkpoint whose files all agree, holding what `change` put there."""
    problem, entries, generation, parts, splits = read_manifest(manifest)
    path = os.path.join(os.path.dirname(manifest), parts[rank][0])
    part_problem, part = read_container(path)
    change(part, splits)
    data = write_container(path, part_problem, part)
    parts[rank][1:] = [len(data), struct.unpack("<Q", data[-8:])[0]]
    write_manifest_of(manifest, problem, entries, generation, parts, splits)


def swap_parts(manifest, a, b):
    """Lists parts a and b of a checkpoint in each other's places: a checkpoint whose files agree,
    each of the two ranks' parts holding the other's atoms."""
    problem, entries, generation, parts, splits = read_manifest(manifest)
    parts[a], parts[b] = parts[b], parts[a]
    for s in splits:
        s[3][a], s[3][b] = s[3][b], s[3][a]
    write_manifest_of(manifest, problem, entries, generation, parts, splits)


def shift_record(manifest, entry, size, src, dst):
    """Moves one record (of `size` bytes) of every block of split entry `entry` from part `src`
    to part `dst` (a copy of dst's first), the manifest listing the new counts: the entry's total
    stays right, but in those two parts it holds another number of atoms than the others."""
    problem, entries, generation, parts, splits = read_manifest(manifest)
    split = next(sp for sp in splits if sp[0] == entry)
    blocks = split[2]
    for rank, delta in [(src, -1), (dst, 1)]:
        path = os.path.join(os.path.dirname(manifest), parts[rank][0])
        part_problem, part = read_container(path)
        n = split[3][rank]
        old = [part[entry][k * n * size:(k + 1) * n * size] for k in range(blocks)]
        part[entry] = b"".join(o[size:] if delta < 0 else o[:size] + o for o in old)
        split[3][rank] += delta
        data = write_container(path, part_problem, part)
        parts[rank][1:] = [len(data), struct.unpack("<Q", data[-8:])[0]]
    write_manifest_of(manifest, problem, entries, generation, parts, splits)


def read_checkpoint(path):
    """{entry name: bytes} of a checkpoint; a manifest's split entries joined from its parts
    into the one-rank layout."""
    _, entries = read_container(path)
    if "hayate.parts" not in entries:
        return entries
    data, at = entries.pop("hayate.parts"), 8  # after the generation

    def u64():
        nonlocal at
        (v,) = struct.unpack_from("<Q", data, at)
        at += 8
        return v

    ranks = u64()
    names = []
    for _ in range(ranks):
        n = u64()
        names.append(data[at:at + n].decode())
        at += n + 16  # size, checksum
    parts = [read_container(os.path.join(os.path.dirname(path), n))[1] for n in names]
    for _ in range(u64()):
        n = u64()
        name = data[at:at + n].decode()
        at += n
        record, blocks = u64(), u64()
        counts = [u64() for _ in range(ranks)]
        joined = b""
        for b in range(blocks):
            for part, count in zip(parts, counts):
                joined += part[name][b * count * record:(b + 1) * count * record]
        entries[name] = joined
    return entries


def md_forces(path):
    """Forces by atom id, the pair energy and the virial of an md checkpoint (double)."""
    e = read_checkpoint(path)
    n = struct.unpack("<q", e["natoms"])[0]
    ids = struct.unpack(f"<{n}q", e["id"])
    f = struct.unpack(f"<{3 * n}d", e["f"])  # x of every atom, then y, then z
    by_id = {ids[i]: (f[i], f[n + i], f[2 * n + i]) for i in range(n)}
    return by_id, struct.unpack("<d", e["energy"])[0], struct.unpack("<d", e["virial"])[0]


def md_atoms(path):
    """Positions and velocities by atom id of an md checkpoint (double)."""
    e = read_checkpoint(path)
    n = struct.unpack("<q", e["natoms"])[0]
    ids = struct.unpack(f"<{n}q", e["id"])
    x = struct.unpack(f"<{3 * n}d", e["x"])
    v = struct.unpack(f"<{3 * n}d", e["v"])
    return {ids[i]: (x[i], x[n + i], x[2 * n + i], v[i], v[n + i], v[2 * n + i])
            for i in range(n)}


def relative_difference(a, b):
    """Largest force difference over the largest force, and the energy and virial ones."""
    fa, ea, wa = a
    fb, eb, wb = b
    if fa.keys() != fb.keys():
        return float("inf")
    scale = max(abs(c) for v in fa.values() for c in v)
    df = max(abs(x - y) for k in fa for x, y in zip(fa[k], fb[k])) / scale
    return max(df, abs(ea - eb) / abs(ea), abs(wa - wb) / abs(wa))


def md_cases(r, source_dir):
    with open(os.path.join(r.work, "md.yaml"), "w") as f:
        f.write(MD)
    # 100 steps (5 rebuilds, migrations) on 1 and 4 ranks (the half list, as on one CPU rank:
    # the ghosts' force shares go back to their owners): thermo within 1e-9; the dumps hold
    # every atom once; the momentum stays zero.
    rc, _, err = r.hayate_run(0, "md.yaml", "md_one", "tuning.list=full")
    check(rc == 0, "md: 100 steps on one rank", err)
    rc, _, err = r.hayate_run(4, "md.yaml", "md_four")
    check(rc == 0, "md: 100 steps on 4 ranks", err)
    if rc == 0:
        a = read_csv(os.path.join(r.work, "md_one", "thermo.csv"))
        b = read_csv(os.path.join(r.work, "md_four", "thermo.csv"))
        worst = max(abs(float(x) - float(y)) / max(1.0, abs(float(x)))
                    for ra, rb in zip(a[1:], b[1:]) for x, y in zip(ra[1:], rb[1:]))
        check(len(a) == len(b) == 12 and worst <= 1e-9,
              f"md: 100 steps on 4 ranks follow one rank's thermo (within {worst:.2g})")
        frames = read_xyz(os.path.join(r.work, "md_four", "dump.xyz"))
        momentum = max(abs(sum(v[k] for v in frame["velo"])) for frame in frames for k in range(3))
        check(len(frames) == 3 and all(len(fr["velo"]) == 2048 for fr in frames) and
              momentum < 1e-9, f"md: 4 ranks dump every atom in each frame; total momentum "
                               f"{momentum:.2g}")
    # Overlap: the interior atoms' forces (no ghost in their rows) are computed while the ghosts'
    # positions travel, the border atoms' after. 100 steps (positions sent every step) on 2
    # ranks (1x1x2: a sixth of each rank's atoms interior) with each list, scatter and position
    # format, and with overlap off, follow one rank's thermo within 1e-9 as above.
    for ranks, variant, extra in [(2, "auto", []), (2, "full", ["tuning.list=full"]),
                                  (2, "full split", ["tuning.list=full", "tuning.positions=split"]),
                                  (2, "half atomic", ["tuning.list=half", "tuning.scatter=atomic"]),
                                  (2, "half duplicated split",
                                   ["tuning.list=half", "tuning.scatter=duplicated",
                                    "tuning.positions=split"]),
                                  (2, "warp (no overlap)", ["tuning.parallel=warp"]),
                                  (2, "overlap off", ["tuning.overlap=off"]),
                                  (4, "overlap off", ["tuning.overlap=off"])]:
        if r.gpu and "tuning.scatter=duplicated" in extra:
            skip(f"md: {ranks} ranks, {variant}", "no duplicated scatter on a GPU")
            continue
        out = f"md_overlap{ranks}_{variant.replace(' ', '_')}"
        rc, _, err = r.hayate_run(ranks, "md.yaml", out, *extra)
        worst = float("inf")
        if rc == 0:
            a = read_csv(os.path.join(r.work, "md_one", "thermo.csv"))
            b = read_csv(os.path.join(r.work, out, "thermo.csv"))
            if len(a) == len(b) == 12:
                worst = max(abs(float(x) - float(y)) / max(1.0, abs(float(x)))
                            for ra, rb in zip(a[1:], b[1:]) for x, y in zip(ra[1:], rb[1:]))
        check(worst <= 1e-9, f"md: 100 steps on {ranks} ranks, {variant}, follow one rank's "
                             f"thermo (within {worst:.2g})", err)
    # --gpu-aware: off stages GPU buffers through host memory, which host backends' buffers are
    # anyway (the bytes of auto); on is refused once, exit 2, where the library takes no GPU
    # memory (Debian's Open MPI), and runs where it does.
    rc, _, err = r.run(2, ["run", "md.yaml", "--threads", "1", "--quiet", "--output",
                           "md_aware_off", "--gpu-aware", "off"])
    check(rc == 0 and not same_files(r.work, "md_overlap2_auto", "md_aware_off",
                                     ["thermo.csv", "checkpoint.bin"]),
          "md: --gpu-aware off on 2 ranks gives the bytes of auto", err)
    _, info, _ = r.run(1, ["info"])
    aware = "CUDA-aware: yes" in info
    rc, _, err = r.run(2, ["run", "md.yaml", "--threads", "1", "--quiet", "--output",
                           "md_aware_on", "--gpu-aware", "on"])
    if aware:
        check(rc == 0, "md: --gpu-aware on runs with a CUDA-aware library", err)
    else:
        check(rc == 2 and len(errors(err)) == 1 and "--gpu-aware on" in err and
              not os.path.exists(os.path.join(r.work, "md_aware_on")),
              f"md: --gpu-aware on refused once, exit 2, by a library without CUDA support "
              f"(rc {rc}: {errors(err)})")
    # The log says how many atoms each rank computes before the ghosts arrive: some on 1x1x2.
    rc, out, err = r.run(2, ["run", "md.yaml", "--threads", "1", "--output", "md_overlap_log",
                             "--set", "run.steps=0"])
    found = re.search(r"(\d+) to (\d+) interior atoms per rank", out + err)
    check(rc == 0 and found is not None and int(found.group(1)) > 0,
          "md: 2 ranks (1x1x2) log their interior atoms, computed while the ghosts travel: " +
          (found.group(0) if found else "no such line"), err)
    # Forces at step 0 of the melt (the last frame above) on 1 rank (the full list) and on grids
    # 1x1x2 (2 ranks), 1x2x2 (4), 2x2x2 (8) and, in a box half as high, 2x2x1 (4): forces,
    # energy and virial to 1e-12 of the largest, with the full list and with the half list
    # (duplicated scatter, and atomic on 4 ranks).
    melt = ["system.source=xyz", "system.xyz.frame=-1", "run.steps=0", "tuning.list=full"]
    rc, _, err = r.hayate_run(0, "md.yaml", "md_flat", "system.lattice.cells=[8,8,4]",
                              "tuning.list=full")
    check(rc == 0, "md: 100 steps of a flat box on one rank", err)
    for shape, dump, counts in [("cube", "md_one", [1, 2, 4, 8]), ("flat", "md_flat", [4])]:
        sets = melt + [f"system.xyz.file={dump}/dump.xyz"]
        one = f"md0_{shape}_plain"
        rc, _, err = r.hayate_run(0, "md.yaml", one, *sets)
        check(rc == 0, f"md {shape}: step 0 of the melt on one rank", err)
        reference = md_forces(os.path.join(r.work, one, "checkpoint.bin")) if rc == 0 else None
        runs = [(ranks, "full", []) for ranks in counts]
        runs += [(ranks, "half", ["tuning.list=half"]) for ranks in counts if ranks > 1]
        runs += [(4, "half atomic", ["tuning.list=half", "tuning.scatter=atomic"])]
        for ranks, variant, extra in runs:
            out = f"md0_{shape}_{ranks}_{variant.replace(' ', '_')}"
            rc, _, err = r.hayate_run(ranks, "md.yaml", out, *sets, *extra)
            d = relative_difference(reference,
                                    md_forces(os.path.join(r.work, out, "checkpoint.bin"))) \
                if rc == 0 and reference else float("inf")
            check(d <= 1e-12, f"md {shape}: step 0 on {ranks} ranks, {variant} list, equals one "
                              f"rank (forces, energy, virial within {d:.2g} of the largest)", err)
    # A checkpoint of 4 ranks at step 50 continues on 4 to the same bytes, on 2 and on 1 to the
    # same thermo within 1e-9.
    rc_half, _, _ = r.hayate_run(4, "md.yaml", "md_half", "run.steps=50")
    for ranks in [4, 2, 0]:
        out = f"md_restart{ranks}"
        shutil.copytree(os.path.join(r.work, "md_half"), os.path.join(r.work, out))
        rc, _, err = r.hayate_run(ranks, "md.yaml", out,
                                  "checkpoint.restart=md_half/checkpoint.bin")
        if ranks == 4:
            check(rc == 0 and not same_files(r.work, "md_four", out,
                                             ["thermo.csv", "dump.xyz", "checkpoint.bin"]),
                  "md: a 4-rank checkpoint continues on 4 ranks to the same bytes", err)
            continue
        ok = rc == 0
        if ok:
            a = read_csv(os.path.join(r.work, "md_four", "thermo.csv"))
            b = read_csv(os.path.join(r.work, out, "thermo.csv"))
            ok = len(a) == len(b) and all(abs(float(x) - float(y)) <= 1e-9 * max(1, abs(float(x)))
                                          for ra, rb in zip(a[1:], b[1:])
                                          for x, y in zip(ra[1:], rb[1:]))
        check(ok, f"md: a 4-rank checkpoint continues on {max(ranks, 1)} rank(s) within 1e-9",
              err)
    # Each rank reads its own part of a checkpoint of its rank count and checks what it reads:
    # a value that is not finite in rank 2's part, or an atom id of rank 0's repeated in rank 3's,
    # is refused with one message and exit 2 (the files agreeing with the manifest).
    half = os.path.join(r.work, "md_half")
    first_id = read_container(os.path.join(half, "checkpoint.bin.r0.g1"))[1]["id"][:8] \
        if rc_half == 0 else b""
    nan = struct.pack("<d", float("nan"))
    for what, rank, change, expected in [
            ("a position that is not finite in rank 2's part", 2,
             lambda e, _: e.update(x=nan + e["x"][8:]),
             ["rank 2 of 4", "checkpoint.bin.r2.g1': entry 'x' element 0", "not finite"]),
            ("an atom id of rank 0's part repeated in rank 3's", 3,
             lambda e, _: e.update(id=first_id + e["id"][8:]), ["'id' ", "twice"])]:
        bad = f"md_bad{rank}"
        shutil.copytree(half, os.path.join(r.work, bad))
        rewrite_part(os.path.join(r.work, bad, "checkpoint.bin"), rank, change)
        rc, _, err = r.hayate_run(4, "md.yaml", f"{bad}_out",
                                  f"checkpoint.restart={bad}/checkpoint.bin")
        check(rc == 2 and len(errors(err)) == 1 and all(x in err for x in expected),
              f"md: {what} refused on 4 ranks, exit 2 (rc {rc}: {errors(err)})")
    # On 2 ranks rank 0 checks parts 0 and 2: the bad part 2 is reported by the first rank, once;
    # `check` on several ranks refuses it too.
    rc, _, err = r.hayate_run(2, "md.yaml", "md_bad2_on2",
                              "checkpoint.restart=md_bad2/checkpoint.bin")
    check(rc == 2 and len(errors(err)) == 1 and "checkpoint.bin.r2.g1'" in err and
          "rank" not in err, f"md: a bad part read by the first rank of 2 refused once, exit 2 "
                             f"(rc {rc}: {errors(err)})")
    rc, _, err = r.run(4, ["check", "md.yaml", "--set",
                           "checkpoint.restart=md_bad3/checkpoint.bin"])
    check(rc == 2 and "twice" in err,
          f"md: check on 4 ranks refuses a repeated atom id (rc {rc}: {errors(err)})")
    # Parts whose entries disagree on their atoms (x and v listed with other counts in parts 0
    # and 2, the totals right): refused, never read past an entry's end.
    shutil.copytree(half, os.path.join(r.work, "md_shifted"))
    shift_record(os.path.join(r.work, "md_shifted", "checkpoint.bin"), "v", 8, 0, 2)
    rc, _, err = r.hayate_run(2, "md.yaml", "md_shifted_out",
                              "checkpoint.restart=md_shifted/checkpoint.bin")
    check(rc == 2 and len(errors(err)) == 1 and "another number of atoms than entry 'x'" in err,
          f"md: parts whose entries hold other numbers of atoms refused, exit 2 (rc {rc}: "
          f"{errors(err)})")
    # Rank 0's and rank 1's parts listed in each other's places: no rank finds only its own atoms
    # in its part, so every rank reads every part, and the run continues to the same bytes.
    shutil.copytree(half, os.path.join(r.work, "md_swapped"))
    swap_parts(os.path.join(r.work, "md_swapped", "checkpoint.bin"), 0, 1)
    rc, _, err = r.hayate_run(4, "md.yaml", "md_swapped",
                              "checkpoint.restart=md_swapped/checkpoint.bin")
    check(rc == 0 and not same_files(r.work, "md_four", "md_swapped",
                                     ["thermo.csv", "dump.xyz", "checkpoint.bin"]),
          "md: parts listed in other ranks' places: every rank reads every part, the same bytes",
          err)
    # Migration: nearly free atoms (reach 0.35) at T = 200 cross several sub-boxes and the
    # periodic boundary between two rebuilds (about 25 box units per 200 steps, sub-boxes 6.7
    # wide): 8 ranks end where one rank does, every atom still there.
    sets = ["system.types=[{name: A, mass: 1.0, epsilon: 1.0e-6, sigma: 0.01, cutoff: 0.05}]",
            "system.temperature=200", "run.steps=400", "neighbor.every=200",
            "output.dump_every=400", "tuning.list=full"]
    rc1, _, _ = r.hayate_run(0, "md.yaml", "md_free1", *sets)
    rc, _, err = r.hayate_run(8, "md.yaml", "md_free8", *sets)
    ok = rc1 == 0 and rc == 0
    if ok:
        a = read_xyz(os.path.join(r.work, "md_free1", "dump.xyz"))[-1]
        b = read_xyz(os.path.join(r.work, "md_free8", "dump.xyz"))[-1]
        ok = len(b["pos"]) == 2048 and max(abs(x - y) for p, q in zip(a["pos"], b["pos"])
                                           for x, y in zip(p, q)) < 1e-9
    check(ok, "md: atoms crossing several sub-boxes and the boundary per rebuild: 8 ranks end "
              "with every atom where one rank has it", err)
    nacl_cases(r, source_dir)
    # Refused once, exit 2: a box too small for the ranks.
    rc, _, err = r.hayate_run(3, "md.yaml", "md_small", "system.lattice.cells=[4,4,4]")
    check(rc == 2 and len(errors(err)) == 1 and "system.lattice.cells" in err,
          f"md: a box too small for 3 ranks refused once with exit 2 (rc {rc}: {errors(err)})")
    rc, _, err = r.run(3, ["check", "md.yaml", "--set", "system.lattice.cells=[4,4,4]"])
    check(rc == 2 and len(errors(err)) == 1 and "system.lattice.cells" in err,
          f"md: check on 3 ranks refuses the same box (rc {rc}: {errors(err)})")
    # A blow-up (atoms far too close after a huge step) stops every rank with one message.
    rc, _, err = r.hayate_run(4, "md.yaml", "md_blowup", "run.dt=0.5")
    check(rc == 3 and len(errors(err)) == 1,
          f"md: a blow-up on 4 ranks: one message, exit 3 (rc {rc}: {errors(err)})")


def nacl_cases(r, source_dir):
    # The Ewald sum sums its structure factors over the ranks: a NaCl melt at step 0 on 2 ranks.
    nacl = os.path.join(source_dir, "inputs", "md", "nacl_melt.yaml")
    small = ["tuning.list=full", "system.lattice.cells=[4,4,4]"]
    rc, _, err = r.hayate_run(0, nacl, "nacl_melt", *small, "run.steps=20",
                              "output.dump_every=20")
    if rc == 2 and "is not compiled into this build" in err:
        skip("md: the NaCl (Ewald) cases", errors(err)[0] if errors(err) else err.strip())
        return
    check(rc == 0, "md: a NaCl melt on one rank", err)
    zero = small + ["run.steps=0", "output.dump_every=0", "system.source=xyz",
                    "system.xyz.frame=-1", "system.xyz.file=nacl_melt/dump.xyz"]
    rc1, _, _ = r.hayate_run(0, nacl, "nacl1", *zero)
    for kind in ["full", "half"]:
        rc, _, err = r.hayate_run(2, nacl, f"nacl2_{kind}", *zero, f"tuning.list={kind}")
        two = os.path.join(r.work, f"nacl2_{kind}", "checkpoint.bin")
        d = relative_difference(md_forces(os.path.join(r.work, "nacl1", "checkpoint.bin")),
                                md_forces(two)) if rc1 == 0 and rc == 0 else float("inf")
        check(d <= 1e-12, f"md: NaCl with the Ewald sum at step 0 on 2 ranks, {kind} list, equals "
                          f"one rank (within {d:.2g})", err)
    # Each rank makes only its sub-box's ions of the lattice, with velocities and Ewald sums
    # from the whole crystal: at step 0 on 4 ranks the atoms have one rank's bits, the energy
    # and virial one rank's to rounding (the perfect crystal's forces are rounding alone).
    lattice0 = small + ["run.steps=0", "output.dump_every=0"]
    rc1, _, err1 = r.hayate_run(0, nacl, "nacl_lattice1", *lattice0)
    rc, _, err = r.hayate_run(4, nacl, "nacl_lattice4", *lattice0)
    ok = rc1 == 0 and rc == 0
    d = float("inf")
    if ok:
        one = os.path.join(r.work, "nacl_lattice1", "checkpoint.bin")
        four = os.path.join(r.work, "nacl_lattice4", "checkpoint.bin")
        ok = md_atoms(one) == md_atoms(four) and len(md_atoms(four)) == 512
        (_, e1, w1), (_, e4, w4) = md_forces(one), md_forces(four)
        d = max(abs(e1 - e4) / abs(e1), abs(w1 - w4) / abs(w1))
    check(ok and d <= 1e-12, f"md: a NaCl lattice made rank by rank on 4 ranks: one rank's "
                             f"positions and velocities, energy and virial within {d:.2g}",
          err1 + err)


def read_xyz(path):
    """Frames of an extended XYZ file: {'pos': [(x, y, z)], 'velo': [(vx, vy, vz)]}."""
    frames = []
    with open(path) as f:
        lines = f.read().splitlines()
    at = 0
    while at < len(lines):
        n = int(lines[at])
        rows = [line.split() for line in lines[at + 2:at + 2 + n]]
        frames.append({"pos": [tuple(map(float, row[1:4])) for row in rows],
                       "velo": [tuple(map(float, row[4:7])) for row in rows]})
        at += 2 + n
    return frames


def gravity_cases(r, source_dir):
    plummer = os.path.join(source_dir, "inputs", "gravity", "plummer_direct.yaml")
    kepler = os.path.join(source_dir, "inputs", "gravity", "kepler.yaml")
    files = ["thermo.csv", "snapshots.xyz", "checkpoint.bin", "force_error.csv"]
    common = ["system.n=300", "run.steps=40", "output.snapshot_every=20", "checkpoint.at_end=true",
              "output.force_error_every=20"]
    cases = [(plummer, ["time.integrator=leapfrog", "precision=mixed"] + common),
             (plummer, ["time.integrator=block", "precision=double"] + common),
             (plummer, ["time.integrator=hermite", "precision=float"] + common),
             (kepler, ["run.steps=500", "checkpoint.at_end=true"])]
    for k, (inp, sets) in enumerate(cases):
        what = f"gravity {os.path.basename(inp)} {' '.join(x for x in sets if 'integrator' in x)}"
        one = f"grav1_{k}"
        rc, _, err = r.hayate_run(0, inp, one, *sets)
        check(rc == 0, f"{what}: one rank runs", err)
        for ranks in [2, 3]:
            out = f"grav{ranks}_{k}"
            rc, _, err = r.hayate_run(ranks, inp, out, *sets)
            present = [f for f in files if os.path.exists(os.path.join(r.work, one, f))]
            check(rc == 0 and not same_files(r.work, one, out, present),
                  f"{what}: {ranks} ranks write the bytes of one rank ({', '.join(present)})", err)
    # A checkpoint of 3 ranks continues on 2 to the one-rank run's state.
    sets = ["system.n=300", "checkpoint.at_end=true"]
    rc, _, _ = r.hayate_run(0, plummer, "grav_whole", "run.steps=40", *sets)
    rc, _, _ = r.hayate_run(3, plummer, "grav_half", "run.steps=20", *sets)
    rc, _, err = r.hayate_run(2, plummer, "grav_rest", "run.steps=40",
                              "checkpoint.restart=grav_half/checkpoint.bin", *sets)
    check(rc == 0 and not same_files(r.work, "grav_whole", "grav_rest", ["checkpoint.bin"]),
          "gravity: the 3-rank checkpoint continues on 2 ranks to the one-rank state", err)
    tree = os.path.join(source_dir, "inputs", "gravity", "plummer_tree.yaml")
    rc, _, err = r.hayate_run(2, tree, "grav_tree")
    check(rc == 2 and len(errors(err)) == 1 and "'solver'" in err,
          f"gravity: the tree on 2 ranks refused once at 'solver' (rc {rc}: {errors(err)})")


def failure_cases(r, source_dir):
    """Failures that meet some ranks only end on every rank, never in a wait."""
    # A checkpoint every 50 steps: each takes new part names, and the previous ones go once the
    # new manifest is in place.
    rc, _, _ = r.hayate_run(2, "fhp.yaml", "fail_fhp", "run.steps=100", "checkpoint.every=50")
    parts = part_files(os.path.join(r.work, "fail_fhp"))
    check(rc == 0 and parts == ["checkpoint.bin.r0.g2", "checkpoint.bin.r1.g2"],
          f"2 ranks checkpointing twice keep the second generation's parts only ({parts})")
    # A manifest planted in the folder cannot make the next checkpoint remove other files: only
    # the names a writer gives parts are removed.
    os.makedirs(os.path.join(r.work, "planted"))
    outside = os.path.join(r.work, "outside.txt")
    for victim in [outside, os.path.join(r.work, "planted", "keep.txt")]:
        with open(victim, "w") as f:
            f.write("keep\n")
    write_manifest(os.path.join(r.work, "planted", "checkpoint.bin"),
                   ["keep.txt", "checkpoint.bin.r1.g4", outside, "checkpoint.bin"], generation=4)
    with open(os.path.join(r.work, "planted", "checkpoint.bin.r1.g4"), "w") as f:
        f.write("an old part\n")
    rc, _, err = r.hayate_run(2, "fhp.yaml", "planted", "run.steps=20")
    kept = [os.path.exists(p) for p in [outside, os.path.join(r.work, "planted", "keep.txt")]]
    parts = part_files(os.path.join(r.work, "planted"))
    check(rc == 0 and all(kept) and parts == ["checkpoint.bin.r0.g5", "checkpoint.bin.r1.g5"],
          f"a planted manifest: only its parts by their writer's names go (kept {kept}, "
          f"parts {parts})", err)
    # Each rank its own folder (no shared file system): refused at set-up, not at the first
    # checkpoint.
    for k in (0, 1):
        os.makedirs(os.path.join(r.work, f"local{k}"), exist_ok=True)
    script = (f"cd local$OMPI_COMM_WORLD_RANK && exec {r.binary} run ../fhp.yaml --threads 1 "
              "--quiet --output o")
    rc, _, err = r.run_cmd(r.mpirun + ["-np", "2", "sh", "-c", script])
    check(rc == 3 and len(errors(err)) == 1 and "rank 1 of 2" in err and "shares" in err,
          f"an output folder rank 1 cannot see: exit 3 at set-up (rc {rc}: {errors(err)})")
    # A part missing, or one of another checkpoint: refused at the key, naming the part (exit 2).
    shutil.copytree(os.path.join(r.work, "fail_fhp"), os.path.join(r.work, "bad_parts"))
    os.remove(os.path.join(r.work, "bad_parts", "checkpoint.bin.r1.g2"))
    rc, _, err = r.hayate_run(2, "fhp.yaml", "bad_out1",
                              "checkpoint.restart=bad_parts/checkpoint.bin")
    check(rc == 2 and len(errors(err)) == 1 and "checkpoint.bin.r1.g2" in err and
          "checkpoint.restart" in err,
          f"a checkpoint whose part is missing: refused at its key, exit 2 (rc {rc}: "
          f"{errors(err)})")
    shutil.copy(os.path.join(r.work, "fhp_half", "checkpoint.bin.r1.g1"),
                os.path.join(r.work, "bad_parts", "checkpoint.bin.r1.g2"))
    rc, _, err = r.hayate_run(1, "fhp.yaml", "bad_out2",
                              "checkpoint.restart=bad_parts/checkpoint.bin")
    check(rc == 2 and len(errors(err)) == 1 and "another checkpoint" in err,
          f"a part of another checkpoint: refused, exit 2 (rc {rc}: {errors(err)})")
    # The first rank alone finds the folder's series foreign on a restart (exit 2).
    path = os.path.join(r.work, "fail_fhp", "fields.csv")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace("mass", "MASS", 1))
    rc, _, err = r.hayate_run(2, "fhp.yaml", "fail_fhp",
                              "checkpoint.restart=fail_fhp/checkpoint.bin")
    check(rc == 2 and len(errors(err)) == 1 and "fields.csv" in err,
          f"a foreign fields.csv met by the first rank on a restart: exit 2 on every rank "
          f"(rc {rc}: {errors(err)})")
    # Only one rank finds its checkpoint (a folder of its own, as on node-local disks): that rank
    # names itself, every rank stops with exit 2.
    for k in (0, 1):
        os.makedirs(os.path.join(r.work, f"node{k}"), exist_ok=True)
    for name in ["checkpoint.bin"] + part_files(os.path.join(r.work, "fail_fhp")):
        shutil.copy(os.path.join(r.work, "fail_fhp", name), os.path.join(r.work, "node0", name))
    script = (f"cd node$OMPI_COMM_WORLD_RANK && exec {r.binary} run ../fhp.yaml --threads 1 "
              "--quiet --output o --set checkpoint.restart=checkpoint.bin")
    rc, _, err = r.run_cmd(r.mpirun + ["-np", "2", "sh", "-c", script])
    check(rc == 2 and len(errors(err)) == 1 and "rank 1 of 2" in err,
          f"a checkpoint only rank 0 can read: rank 1 names itself, exit 2 (rc {rc}: "
          f"{errors(err)})")
    # rk45's step-size underflow is met by every rank alike: one message, exit 3.
    rc, _, err = r.hayate_run(2, "ode.yaml", "fail_rk45", "run.method=rk45", "run.rtol=1e-300",
                              "run.atol=1e-300")
    check(rc == 3 and len(errors(err)) == 1 and "underflow" in err,
          f"rk45 underflow on 2 ranks: one message, exit 3 (rc {rc}: {errors(err)})")


def common_cases(r, source_dir):
    rc, out, _ = r.run(2, ["info", "--threads", "1"])
    mpi_lines = [line for line in out.splitlines() if line.startswith("MPI: ")]
    check(rc == 0 and len(mpi_lines) == 1 and "2 ranks" in mpi_lines[0],
          "info on 2 ranks: one report naming MPI and the ranks")
    # stream: every rank its own arrays, the same values as one rank's; rates aggregated.
    stream = os.path.join(source_dir, "inputs", "stream", "bandwidth.yaml")
    sets = ["system.n=100000", "run.steps=4", "checkpoint.at_end=true"]
    rc1, _, _ = r.hayate_run(0, stream, "stream_one", *sets)
    rc, _, err = r.hayate_run(3, stream, "stream_three", *sets)
    rows = read_csv(os.path.join(r.work, "stream_three", "stream.csv")) if rc == 0 else []
    check(rc1 == 0 and rc == 0 and len(rows) == 5 and
          not same_files(r.work, "stream_one", "stream_three", ["checkpoint.bin"]),
          "stream on 3 ranks: 4 rows of rates, the arrays of one rank", err)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--source-dir", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hayate_mpi_") as work:
        r = Runner(os.path.abspath(a.binary), a.mpirun, work)
        common_cases(r, os.path.abspath(a.source_dir))
        md_cases(r, os.path.abspath(a.source_dir))
        fhp_cases(r)
        ode_cases(r, os.path.abspath(a.source_dir))
        gravity_cases(r, os.path.abspath(a.source_dir))
        failure_cases(r, os.path.abspath(a.source_dir))
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
