#!/usr/bin/env python3
"""Draws the pictures of the "Validation" sections of docs/user/{ode,gravity,fhp,md}.md from what
the validation tests measured.

    HAYATE_VALIDATION_OUTPUT=out/validation ctest --preset openmp -L validation
    python3 scripts/plot_validation.py out/validation docs/user/images [ode gravity fhp md]

Each test writes its measurements as CSV into HAYATE_VALIDATION_OUTPUT (a relative folder is
taken from the test's working directory, build/openmp/unit_tests; give an absolute one); this
script reads them and writes validation_ode.svg, validation_gravity.svg, validation_fhp.svg
and validation_md.svg,
a panel per case with the published value or curve drawn beside the measurement. Python 3
standard library only (svg_chart.py beside it).

A run of an FHP cylinder input with VTK snapshots (the larger example of docs/user/fhp.md) is
measured as the test measures its cylinders:

    python3 scripts/plot_validation.py --cylinder-run RUN_FOLDER out/validation

writes fhp_cylinder_example.csv (u_y behind the cylinder, u_x ahead of it, per snapshot) into
out/validation and prints Re and St; the fhp picture then shows it too. A run of a plate started
impulsively (docs/user/fhp.md, Validation) is measured as the plate test measures it:

    python3 scripts/plot_validation.py --plate-run RUN_FOLDER out/validation

writes fhp_plate_example_L<L>.csv and prints the growth exponent.
"""
import csv
import glob
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svg_chart import Panel, write_figure  # noqa: E402


def table(folder, name):
    path = os.path.join(folder, name + ".csv")
    if not os.path.exists(path):
        sys.exit(f"{path} is missing: run the validation tests with HAYATE_VALIDATION_OUTPUT")
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return {k: [float(r[k]) for r in rows] for k in rows[0]}


def ode(folder, out):
    panels = []
    dt = table(folder, "ode_lr_line_dt")
    p = Panel("LR-Line: conduction velocity against dt (Euler)", "dt (ms)", "velocity (cm/s)",
              legend="upper right")
    v1, v2, v4 = dt["velocity"]
    limit = v4 + (v4 - v2)
    p.line(dt["dt"], dt["velocity"], 0, marker="o", label="measured, cells 20-80")
    p.line([0, 0.01], [limit, limit - (v4 - v2) * 4], 1, "dashed",
           label=f"first order, limit {limit:.2f} cm/s")
    p.x.limits = (0, 0.011)
    panels.append(p)

    line = table(folder, "ode_lr_line")
    p = Panel("LR-Line: APD90 along the line", "cell (100 um each)", "APD90 (ms)",
              legend="upper right")
    p.line(line["cell"], line["apd90"], 0, marker="o", label="in the line")
    p.hline(line["apd90_cell"][0], 3, "dashed", label="single LR1991 cell")
    panels.append(p)

    ring = table(folder, "ode_ring_reentry")
    p = Panel("LR-Ring, 1800 cells, one-way front: re-entry", "path of the front (cells)",
              "activation time (ms)", legend="upper left")
    lap1 = [(x, t) for x, t, lap in zip(ring["path_cells"], ring["time"], ring["lap"]) if lap == 1]
    lap2 = [(x, t) for x, t, lap in zip(ring["path_cells"], ring["time"], ring["lap"]) if lap == 2]
    delay = (lap1[-1][1] - lap1[0][1]) / (lap1[-1][0] - lap1[0][0])
    p.points([x for x, _ in lap1], [t for _, t in lap1], 0, label="first lap")
    p.points([x for x, _ in lap2], [t for _, t in lap2], 3, marker="s",
             label="second lap (cells 0, 25, 50)")
    p.vline(1800, "#777777", "dotted", label="one ring length")
    p.line([0, 1900], [lap1[0][1] - lap1[0][0] * delay, lap1[0][1] + (1900 - lap1[0][0]) * delay],
           "#777777", "dashed", width=1)
    panels.append(p)

    wb = table(folder, "ode_wb_coherence")
    p = Panel("Wang-Buzsaki network: coherence (their kappa)", "network frequency (Hz)",
              "kappa", xlog=True, xlim=(10, 300), ylim=(0, 1.45), legend="upper right")
    p.band(20, 80, label="gamma band, 20-80 Hz (the paper)")
    names = []
    for d, drive, spread, f, k in zip(wb["decay_ms"], wb["drive"], wb["spread"],
                                      wb["frequency"], wb["kappa"]):
        names.append(f"{drive:g}{' +- 0.05' if spread else ''}, {d:g} ms")
    het = [(f, k) for f, k, s in zip(wb["frequency"], wb["kappa"], wb["spread"]) if s]
    hom = [(f, k) for f, k, s in zip(wb["frequency"], wb["kappa"], wb["spread"]) if not s]
    p.line([f for f, _ in het], [k for _, k in het], 0, marker="o",
           label="drive 0.5 / 1 / 4 uA/cm2 +- 0.05")
    p.points([f for f, _ in hom], [k for _, k in hom], 3, marker="s",
             label="equal drive 1 uA/cm2, decay 10 / 2 ms")
    for f, k, d, name in zip(wb["frequency"], wb["kappa"], wb["decay_ms"], names):
        p.text(f, k, name, below=d < 10)
    panels.append(p)

    cpg = table(folder, "ode_cpg_cycles")
    p = Panel("Rybak-style CPG: extensor onset phase per cycle", "cycle start (ms)",
              "phase in the flexor cycle", ylim=(0, 1), legend="lower right")
    p.line(cpg["onset_ms"], cpg["phase"], 0, marker="o", label="extensor burst onset")
    p.hline(0.5, 3, "dashed", label="antiphase, 0.5 (symmetry)")
    panels.append(p)
    p = Panel("Rybak-style CPG: period and burst durations", "cycle start (ms)", "ms",
              ylim=(0, 600), legend="lower right")
    p.line(cpg["onset_ms"], cpg["period_ms"], 0, marker="o", label="period")
    p.line(cpg["onset_ms"], cpg["flexor_ms"], 1, marker="s", label="flexor burst")
    p.line(cpg["onset_ms"], cpg["extensor_ms"], 2, marker="^", label="extensor burst")
    panels.append(p)
    write_figure(os.path.join(out, "validation_ode.svg"), panels)


def gravity(folder, out):
    panels = []
    pr = table(folder, "gravity_precision")
    p = Panel("Field on a ring's axis: summation error", "masses on the ring",
              "max relative error of a", xlog=True, ylog=True, ylim=(1e-17, 1e-1),
              legend="lower right")
    p.line(pr["n"], [(n - 1) * 2.0 ** -24 for n in pr["n"]], "#777777", "dashed",
           label="(n - 1) u, float bound (Higham)")
    p.line(pr["n"], pr["float"], 3, marker="o", label="precision: float")
    p.line(pr["n"], pr["mixed"], 0, marker="s", label="precision: mixed")
    p.line(pr["n"], [max(e, 1e-17) for e in pr["double"]], 2, marker="^",
           label="precision: double")
    panels.append(p)

    b = table(folder, "gravity_block_steps")
    p = Panel("Plummer, 512 bodies: block steps vs dt/16 shared", "time (N-body units)",
              "(E - E0) / |E0|", legend="upper left")
    p.line(b["time"], b["energy_error_shared"], 0, label="shared step dt/16")
    p.line(b["time"], b["energy_error_block"], 3, "dashed", marker="o",
           label="block steps dt/2^k, k <= 4")
    panels.append(p)

    a = 3 * math.pi / 16
    inside = 1000 / 101 ** 1.5
    p = Panel("Plummer sphere, 2048 bodies: Lagrangian radii", "time (N-body units)",
              "radius", ylim=(0, 3.4), legend="upper right")
    for name, style, marker, label in (("gravity_plummer_direct", "solid", "o", "direct"),
                                       ("gravity_plummer_tree", "dashed", "s", "tree")):
        pl = table(folder, name)
        for key, colour in (("r10", 0), ("r50", 1), ("r90", 2)):
            p.line(pl["time"], pl[key], colour, style, marker=marker,
                   label=f"{key[1:]}% of the mass, {label}" if colour == 0 else None)
    for f, colour in ((0.1, 0), (0.5, 1), (0.9, 2)):
        p.hline(a / math.sqrt((f * inside) ** (-2 / 3) - 1), colour, "dotted")
    p.hline(1e9, "#777777", "dotted", label="Plummer (1911), 10 / 50 / 90%")
    panels.append(p)
    p = Panel("Plummer sphere: Kolmogorov-Smirnov distance", "time (N-body units)",
              "distance to the Plummer M(r)", ylim=(0, 0.05), legend="upper right")
    for name, colour, marker, label in (("gravity_plummer_direct", 0, "o", "direct"),
                                        ("gravity_plummer_tree", 3, "s", "tree")):
        pl = table(folder, name)
        p.line(pl["time"], pl["ks"], colour, marker=marker, label=label)
    p.hline(1.95 / math.sqrt(2048), "#777777", "dashed", label="0.1% level, 1.95 / sqrt(N)")
    panels.append(p)

    g = table(folder, "gravity_galaxy_disk")
    p = Panel("Galaxy disk: exponential scale length", "time (rotation period at R_d: 18)",
              "R_d = mean(R) / 2", ylim=(0.8, 1.2), legend="upper right")
    for n, colour in ((2048, 0), (8192, 3)):
        disk = round(n * 0.1 / 1.15)
        p.line(g["time"], g[f"scale_{n}"], colour, marker="o", label=f"{n} bodies")
        band = 3 / math.sqrt(2 * disk)
        p.hline(1 + band, colour, "dotted")
        p.hline(1 - band, colour, "dotted",
                label=f"Freeman R_d = 1 +- 3 sampling errors ({n})")
    panels.append(p)
    p = Panel("Galaxy disk: thickness (two-body heating ~ 1/N)", "time (N-body units)",
              "median |z|", ylim=(0, 0.25), legend="upper left")
    p.line(g["time"], g["thickness_2048"], 0, marker="o", label="2048 bodies")
    p.line(g["time"], g["thickness_8192"], 3, marker="s", label="8192 bodies (shipped)")
    p.hline(0.1 * math.atanh(0.5), "#777777", "dashed", label="initial sech^2, z0 = 0.1")
    p.hline(0.2 * math.atanh(0.5), "#777777", "dotted", label="twice that: the 8192 band")
    panels.append(p)
    write_figure(os.path.join(out, "validation_gravity.svg"), panels)


def fhp(folder, out):
    panels = []
    w = table(folder, "fhp_cylinder_wake")
    p = Panel("Cylinder, D = 80 (test): u_y 1.5-2.5 D behind it", "step", "u_y (lattice units)",
              legend="upper right")
    p.line(w["step"], w["uy"], 0, width=1.0)
    panels.append(p)
    s = table(folder, "fhp_cylinder_strouhal")
    example = os.path.exists(os.path.join(folder, "fhp_cylinder_example.csv"))
    st = Panel("Shedding frequency against Re", "Re = g U D / nu",
               "Strouhal number f D / (g U)", xlim=(0, 160), ylim=(-0.02, 0.34),
               legend="lower right")
    reynolds = [50 + k for k in range(101)]
    st.line(reynolds, [0.212 - 4.5 / r for r in reynolds], "#000000",
            label="Roshko (1954), unbounded")
    st.points([100], [0.30], "#777777", marker="^",
              label="Schafer & Turek (1996), D/H = 0.24")
    st.vline(47, "#777777", "dotted", label="onset of shedding, Re 47")
    for r, value in zip(s["Re"], s["St"]):
        if value > 0:
            st.points([r], [value], 3, label=f"FHP-III test, Re {r:.0f}: sheds")
        else:
            st.points([r], [0.0], 0, marker="x", label=f"FHP-III test, Re {r:.0f}: steady")
    if example:
        e = table(folder, "fhp_cylinder_example_strouhal")
        st.points(e["Re"], e["St"], 2, marker="s",
                  label=f"cylinder.yaml, D = {e['D'][0]:g}, Re {e['Re'][0]:.0f}")
    panels.append(st)
    if example:
        x = table(folder, "fhp_cylinder_example")
        p = Panel("cylinder.yaml (D = 128): u_y 1.5-2.5 D behind it", "step",
                  "u_y (lattice units)", legend="upper right")
        p.line(x["step"], x["uy"], 2, width=1.0)
        panels.append(p)
    b = table(folder, "fhp_plate_bubble")
    fit = table(folder, "fhp_plate_exponent")
    p = Panel("Plate started impulsively: bubble length", "g U t / L",
              "bubble length / L", xlog=True, ylog=True, ylim=(0.05, 40),
              legend="upper left")
    used = [(t, ell) for t, ell in zip(b["gUt_L"], b["length_L"]) if t >= 0.5 and ell > 0]
    # The published law through the geometric mean of the fitted points.
    mx = math.exp(sum(math.log(t) for t, _ in used) / len(used))
    my = math.exp(sum(math.log(ell) for _, ell in used) / len(used))
    ts = [0.3 * 1.1 ** k for k in range(25)]
    p.line(ts, [my * (t / mx) ** (2 / 3) for t in ts], "#000000",
           label="Taneda & Honji (1971): (U t / L)^(2/3)")
    p.points([t for t, _ in used], [ell for _, ell in used], 3,
             label=f"test, L = 64, Re {fit['Re'][0]:.0f}, 4 runs: exponent "
                   f"{fit['exponent'][0]:.2f}")
    for colour, path in enumerate(sorted(glob.glob(os.path.join(folder,
                                                                "fhp_plate_example_L*.csv")))):
        L = re.search(r"_L(\d+)\.csv$", path).group(1)
        e = table(folder, os.path.basename(path)[:-4])
        pts = [(t, ell) for t, ell in zip(e["gUt_L"], e["length_L"]) if t >= 0.5 and ell > 0]
        g, nu = 1 / 3, 0.11
        U = e["gUt_L"][-1] * float(L) / (g * e["step"][-1])
        lx = [math.log(t) for t, _ in pts]
        ly = [math.log(ell) for _, ell in pts]
        mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
        slope = (sum((a - mx) * (b - my) for a, b in zip(lx, ly)) /
                 sum((a - mx) ** 2 for a in lx))
        p.points([t for t, _ in pts], [ell for _, ell in pts], 4 + colour, marker="s",
                 label=f"--plate-run, L = {L}, Re {g * U * float(L) / nu:.0f}, 1 run: exponent "
                       f"{slope:.2f}")
    early = [(t, ell) for t, ell in zip(b["gUt_L"], b["length_L"]) if t < 0.5 and ell > 0]
    if early:
        p.points([t for t, _ in early], [ell for _, ell in early], 0, marker="x",
                 label="g U t / L < 0.5: the bubble forming (not fitted)")
    panels.append(p)
    write_figure(os.path.join(out, "validation_fhp.svg"), panels)


def md(folder, out):
    panels = []
    c = table(folder, "md_lj_crystal")
    p = Panel("Lennard-Jones fcc crystal: energy per atom", "nearest-neighbour distance / sigma",
              "U / (N epsilon)", legend="upper right")
    rs = [1.0 + 0.005 * k for k in range(61)]
    p.line(rs, [2 * (12.13188 * r ** -12 - 14.45392 * r ** -6) for r in rs], "#000000",
           label="Lennard-Jones & Ingham (1925) lattice sums")
    p.points(c["r"], c["energy"], 3, label="hayate, cutoff 6 sigma + tail")
    panels.append(p)
    m = table(folder, "md_morse_period")
    p = Panel("Morse pair: period against energy", "E / D above the minimum",
              "period (mu = 1/2, D = 1, a = 2)", legend="upper left")
    es = [0.01 * k for k in range(0, 93)]
    p.line(es, [math.pi / 2 / math.sqrt(1 - e) for e in es], "#000000",
           label="(pi / a) sqrt(2 mu / -E) (Landau & Lifshitz)")
    p.points(m["excitation"], m["period"], 3, label="hayate, velocity Verlet, dt 0.001")
    panels.append(p)
    write_figure(os.path.join(out, "validation_md.svg"), panels)


def read_vtk(path):
    """(step, origin, spacing, dims, velocity rows) of a legacy VTK file written by hayate fhp."""
    with open(path) as f:
        lines = f.read().split("\n")
    step = int(re.search(r"step (\d+)", lines[1]).group(1))
    dims = [int(v) for v in lines[4].split()[1:3]]
    origin = [float(v) for v in lines[5].split()[1:3]]
    spacing = [float(v) for v in lines[6].split()[1:3]]
    start = next(k for k, line in enumerate(lines) if line.startswith("VECTORS velocity")) + 1
    velocity = [tuple(map(float, lines[start + k].split()[:2])) for k in range(dims[0] * dims[1])]
    return step, origin, spacing, dims, velocity


def cylinder_run(run, folder):
    """u_y 1.5-2.5 D behind the cylinder (within D/4 of its axis) and u_x 2-3 D ahead of it
    (within D/2), from the VTK snapshots of an FHP run with one circle; Re and St as the
    validation test computes them (FHP-III at d = 0.3: g = 1/3, nu = 0.11)."""
    with open(os.path.join(run, "run.yaml")) as f:
        text = f.read()
    circle = re.search(r"type: circle\s+x: ([\d.]+)\s+y: ([\d.]+)\s+radius: ([\d.]+)", text)
    xc, row, radius = (float(v) for v in circle.groups())
    yc, D = row * math.sqrt(3) / 2, 2 * radius
    rows = []
    for path in sorted(glob.glob(os.path.join(run, "fields_[0-9]*.vtk"))):
        step, origin, spacing, dims, velocity = read_vtk(path)
        behind, ahead = [], []
        for j in range(dims[1]):
            for i in range(dims[0]):
                x, y = origin[0] + i * spacing[0], origin[1] + j * spacing[1]
                if xc + 1.5 * D <= x <= xc + 2.5 * D and abs(y - yc) <= D / 4:
                    behind.append(velocity[j * dims[0] + i][1])
                if xc - 3 * D <= x <= xc - 2 * D and abs(y - yc) <= D / 2:
                    ahead.append(velocity[j * dims[0] + i][0])
        rows.append((step, sum(behind) / len(behind), sum(ahead) / len(ahead)))
    with open(os.path.join(folder, "fhp_cylinder_example.csv"), "w") as f:
        f.write("step,uy,ux\n")
        for r in rows:
            f.write(",".join(f"{v:g}" for v in r) + "\n")
    # After the first quarter of the run: five-sample running mean, upward zero crossings.
    late = rows[len(rows) // 4:]
    U = sum(r[2] for r in late) / len(late)
    mean = sum(r[1] for r in late) / len(late)
    smooth = [(late[j][0], sum(late[j + k][1] - mean for k in range(-2, 3)) / 5)
              for j in range(2, len(late) - 2)]
    up = [t0 + (t1 - t0) * -v0 / (v1 - v0)
          for (t0, v0), (t1, v1) in zip(smooth, smooth[1:]) if v0 < 0 <= v1]
    g, nu = 1 / 3, 0.11
    period = (up[-1] - up[0]) / (len(up) - 1)
    with open(os.path.join(folder, "fhp_cylinder_example_strouhal.csv"), "w") as f:
        f.write(f"D,Re,St,periods\n{D:g},{g * U * D / nu:g},{D / period / (g * U):g},"
                f"{len(up) - 1}\n")
    print(f"D = {D:g}: U {U:.3f}, Re {g * U * D / nu:.1f}, period {period:.0f} steps over "
          f"{len(up) - 1} periods, St {D / period / (g * U):.3f} "
          f"(Roshko 1954, unbounded: {0.212 - 4.5 / (g * U * D / nu):.3f})")


def plate_run(run, folder):
    """The bubble behind a plate started impulsively, from the VTK snapshots of an FHP run with
    one plate and the gas moving at step 0, measured as the validation test measures it: mean
    u_x over the cells within L/8 of the plate's axis, behind the plate, snapshots grouped in
    time windows 1.2 times longer each; the bubble ends where that profile turns forward after its
    most backward bin. U is
    u_x 2-3 L ahead of the plate (within L/2). Writes fhp_plate_example_L<L>.csv and prints the
    exponent fitted over g U t / L >= 0.5 (FHP-III at d = 0.3: g = 1/3, nu = 0.11)."""
    with open(os.path.join(run, "run.yaml")) as f:
        text = f.read()
    plate = re.search(r"type: plate\s+x: ([\d.]+)\s+y: ([\d.]+)\s+length: ([\d.]+)", text)
    xc, row, L = (float(v) for v in plate.groups())
    yc = row * math.sqrt(3) / 2
    snaps = []
    for path in sorted(glob.glob(os.path.join(run, "fields_[0-9]*.vtk"))):
        step, origin, spacing, dims, velocity = read_vtk(path)
        axis, ahead, uy = {}, [], []
        for j in range(dims[1]):
            y = origin[1] + j * spacing[1]
            for i in range(dims[0]):
                x = origin[0] + i * spacing[0]
                ux_, uy_ = velocity[j * dims[0] + i]
                if abs(y - yc) <= L / 8 and xc + 1 < x <= xc + 3 * L:
                    axis.setdefault(i, []).append(ux_)
                    if x <= xc + L:
                        uy.append(uy_)
                if xc - 3 * L <= x <= xc - 2 * L and abs(y - yc) <= L / 2:
                    ahead.append(ux_)
        xs = sorted(axis)
        snaps.append((step, [origin[0] + i * spacing[0] - xc for i in xs],
                      [sum(axis[i]) / len(axis[i]) for i in xs],
                      sum(ahead) / len(ahead), sum(uy) / len(uy)))
    g, nu = 1 / 3, 0.11
    U = sum(s[3] for s in snaps) / len(snaps)
    rows, t0 = [], snaps[0][0]
    while t0 <= snaps[-1][0]:
        group = [s for s in snaps if t0 <= s[0] < 1.2 * t0]
        t0 *= 1.2
        if not group:
            continue
        dx = group[0][1]
        u = [sum(s[2][k] for s in group) / len(group) for k in range(len(dx))]
        k = min(range(len(u)), key=lambda b: u[b])
        while k < len(u) and u[k] < 0:
            k += 1
        length = 0.0
        if 0 < k < len(u):
            length = dx[k - 1] + (dx[k] - dx[k - 1]) * u[k - 1] / (u[k - 1] - u[k])
        t = math.sqrt(group[0][0] * group[-1][0])
        rows.append((t, g * U * t / L, length / L,
                     abs(sum(s[4] for s in group) / len(group)) / U))
    with open(os.path.join(folder, f"fhp_plate_example_L{L:g}.csv"), "w") as f:
        f.write("step,gUt_L,length_L,asymmetry\n")
        for r in rows:
            f.write(",".join(f"{v:g}" for v in r) + "\n")
    fit = [(math.log(r[1]), math.log(r[2])) for r in rows if r[1] >= 0.5 and r[2] > 0]
    mx, my = sum(a for a, _ in fit) / len(fit), sum(b for _, b in fit) / len(fit)
    slope = (sum((a - mx) * (b - my) for a, b in fit) / sum((a - mx) ** 2 for a, _ in fit))
    print(f"L = {L:g}: U {U:.3f}, Re {g * U * L / nu:.0f}, exponent {slope:.3f} over "
          f"{len(fit)} windows, g U t / L up to {rows[-1][1]:.2f}, bubble up to "
          f"{max(r[2] for r in rows):.2f} L, u_y on the axis at most "
          f"{max(r[3] for r in rows if r[1] >= 0.5):.3f} U")


def main(argv):
    if len(argv) == 4 and argv[1] == "--cylinder-run":
        cylinder_run(argv[2], argv[3])
        return
    if len(argv) == 4 and argv[1] == "--plate-run":
        plate_run(argv[2], argv[3])
        return
    if len(argv) < 3:
        sys.exit(__doc__)
    folder, out = argv[1], argv[2]
    os.makedirs(out, exist_ok=True)
    figures = {"ode": ode, "gravity": gravity, "fhp": fhp, "md": md}
    for name in argv[3:] or figures:
        figures[name](folder, out)


if __name__ == "__main__":
    main(sys.argv)
