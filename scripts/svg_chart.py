"""Line charts as SVG with the Python standard library only: panels with linear or logarithmic
axes, lines with markers, reference lines and bands, and a legend, laid out on a grid. Used by
plot_validation.py, so the pictures of the docs can be redrawn on any machine with Python 3."""
import math
from xml.sax.saxutils import escape

COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf"]
DASHES = {"solid": None, "dotted": "2,3", "dashed": "6,4"}


def nice_step(span, target=5):
    """A round tick spacing (1, 2 or 5 times a power of ten) giving about `target` ticks."""
    raw = span / target
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power


def fmt(v):
    if v == 0:
        return "0"
    if abs(v) >= 1e4 or abs(v) < 1e-3:
        exponent = math.floor(math.log10(abs(v)))
        mantissa = v / 10 ** exponent
        return f"{mantissa:g}e{exponent}" if abs(mantissa - 1) > 1e-9 else f"1e{exponent}"
    return f"{v:.6g}"


class Axis:
    def __init__(self, log=False, limits=None):
        self.log, self.limits = log, limits

    def bounds(self, values):
        if self.limits:
            lo, hi = self.limits
        else:
            vals = [v for v in values if (v > 0 if self.log else True) and math.isfinite(v)]
            lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
        if self.log:
            lo, hi = math.log10(lo), math.log10(hi)
            if not self.limits:
                lo, hi = math.floor(lo), math.ceil(hi)
        if hi == lo:
            hi, lo = hi + 0.5, lo - 0.5
        if not self.log and not self.limits:
            pad = 0.05 * (hi - lo)
            lo, hi = lo - pad, hi + pad
        self.lo, self.hi = lo, hi

    def frac(self, v):
        if self.log:
            v = math.log10(v) if v > 0 else self.lo
        return (v - self.lo) / (self.hi - self.lo)

    def ticks(self):
        if self.log:
            first, last = math.ceil(self.lo - 1e-9), math.floor(self.hi + 1e-9)
            every = max(1, (last - first) // 6 + 1)
            return [10.0 ** k for k in range(first, last + 1, every)]
        step = nice_step(self.hi - self.lo)
        k = math.ceil(self.lo / step - 1e-9)
        out = []
        while k * step <= self.hi + 1e-9 * step:
            out.append(round(k * step, 12))
            k += 1
        return out


class Panel:
    """One chart: call line(), hline(), band(), text(), then Figure lays it out."""

    def __init__(self, title, xlabel, ylabel, xlog=False, ylog=False, xlim=None, ylim=None,
                 legend="upper right"):
        self.title, self.xlabel, self.ylabel = title, xlabel, ylabel
        self.x, self.y = Axis(xlog, xlim), Axis(ylog, ylim)
        self.items, self.legend = [], legend

    def line(self, xs, ys, colour=0, style="solid", marker=None, label=None, width=1.6,
             connect=True):
        self.items.append(("line", list(xs), list(ys), colour, style, marker, label, width, connect))

    def points(self, xs, ys, colour=0, marker="o", label=None):
        self.line(xs, ys, colour, marker=marker, label=label, connect=False)

    def hline(self, y, colour=0, style="dotted", label=None):
        self.items.append(("hline", y, colour, style, label))

    def vline(self, x, colour=0, style="dotted", label=None):
        self.items.append(("vline", x, colour, style, label))

    def band(self, x0, x1, label=None, colour="#e8e8e8"):
        self.items.append(("band", x0, x1, colour, label))

    def text(self, x, y, words, colour="#333333", below=False):
        """Words beside the point (x, y): above and to the right of it, or below it."""
        self.items.append(("text", x, y, words, colour, below))

    def _colour(self, c):
        return COLOURS[c % len(COLOURS)] if isinstance(c, int) else c

    def render(self, ox, oy, w, h):
        L, R, T, B = 62, 12, 26, 42
        xs = [v for it in self.items if it[0] == "line" for v in it[1]]
        xs += [it[1] for it in self.items if it[0] == "vline"]
        ys = [v for it in self.items if it[0] == "line" for v in it[2]]
        ys += [it[1] for it in self.items if it[0] == "hline"]
        self.x.bounds(xs)
        self.y.bounds(ys)
        pw, ph = w - L - R, h - T - B
        px = lambda v: ox + L + self.x.frac(v) * pw
        py = lambda v: oy + T + (1 - self.y.frac(v)) * ph
        inside = lambda a, b: -1e-9 <= self.x.frac(a) <= 1 + 1e-9 and -1e-9 <= self.y.frac(b) <= 1 + 1e-9
        out = [f'<text x="{ox + w / 2:.1f}" y="{oy + 16}" text-anchor="middle" font-size="13">'
               f'{escape(self.title)}</text>']
        clip = f"clip{int(ox)}_{int(oy)}"
        out.append(f'<clipPath id="{clip}"><rect x="{ox + L}" y="{oy + T}" width="{pw}" '
                   f'height="{ph}"/></clipPath>')
        legend = []
        for it in self.items:
            if it[0] == "band":
                _, a, b, colour, label = it
                x0, x1 = px(max(a, self.x.limits[0] if self.x.limits else a)), px(b)
                out.append(f'<rect x="{min(x0, x1):.1f}" y="{oy + T}" width="{abs(x1 - x0):.1f}" '
                           f'height="{ph}" fill="{colour}" clip-path="url(#{clip})"/>')
                if label:
                    legend.append(("band", colour, None, None, label))
        for t in self.x.ticks():
            X = px(t)
            out.append(f'<line x1="{X:.1f}" y1="{oy + T + ph}" x2="{X:.1f}" y2="{oy + T + ph + 4}" '
                       f'stroke="black"/><text x="{X:.1f}" y="{oy + T + ph + 16}" '
                       f'text-anchor="middle">{fmt(t)}</text>')
        for t in self.y.ticks():
            Y = py(t)
            out.append(f'<line x1="{ox + L - 4}" y1="{Y:.1f}" x2="{ox + L}" y2="{Y:.1f}" '
                       f'stroke="black"/><text x="{ox + L - 6}" y="{Y + 4:.1f}" '
                       f'text-anchor="end">{fmt(t)}</text>')
        out.append(f'<rect x="{ox + L}" y="{oy + T}" width="{pw}" height="{ph}" fill="none" '
                   f'stroke="black"/>')
        out.append(f'<text x="{ox + L + pw / 2:.1f}" y="{oy + h - 8}" text-anchor="middle">'
                   f'{escape(self.xlabel)}</text>')
        out.append(f'<text transform="translate({ox + 14},{oy + T + ph / 2:.1f}) rotate(-90)" '
                   f'text-anchor="middle">{escape(self.ylabel)}</text>')
        for it in self.items:
            kind = it[0]
            if kind == "line":
                _, lx, ly, colour, style, marker, label, width, connect = it
                c = self._colour(colour)
                dash = DASHES[style]
                pts = [(px(a), py(b)) for a, b in zip(lx, ly)
                       if math.isfinite(a) and math.isfinite(b) and (b > 0 or not self.y.log)]
                if connect and len(pts) > 1:
                    d = " ".join(f"{a:.1f},{b:.1f}" for a, b in pts)
                    extra = f' stroke-dasharray="{dash}"' if dash else ""
                    out.append(f'<polyline fill="none" stroke="{c}" stroke-width="{width}"{extra} '
                               f'points="{d}" clip-path="url(#{clip})"/>')
                if marker:
                    for (a, b), (va, vb) in zip(pts, zip(lx, ly)):
                        if inside(va, vb):
                            out.append(marker_svg(marker, a, b, c))
                if label:
                    legend.append(("line", c, dash if connect else "none", marker, label))
            elif kind in ("hline", "vline"):
                _, v, colour, style, label = it
                c, dash = self._colour(colour), DASHES[style]
                extra = f' stroke-dasharray="{dash}"' if dash else ""
                if kind == "hline":
                    Y = py(v)
                    out.append(f'<line x1="{ox + L}" y1="{Y:.1f}" x2="{ox + L + pw}" y2="{Y:.1f}" '
                               f'stroke="{c}" stroke-width="1.3"{extra}/>')
                else:
                    X = px(v)
                    out.append(f'<line x1="{X:.1f}" y1="{oy + T}" x2="{X:.1f}" y2="{oy + T + ph}" '
                               f'stroke="{c}" stroke-width="1.3"{extra}/>')
                if label:
                    legend.append(("line", c, dash, None, label))
            elif kind == "text":
                _, a, b, words, colour, below = it
                out.append(f'<text x="{px(a) + 4:.1f}" y="{py(b) + (14 if below else -4):.1f}" '
                           f'fill="{colour}" font-size="10">{escape(words)}</text>')
        if legend:
            width = 30 + 6.0 * max(len(e[4]) for e in legend)
            lx = ox + L + pw - width - 6 if "right" in self.legend else ox + L + 6
            ly = oy + T + 6 if "upper" in self.legend else oy + T + ph - 6 - 15 * len(legend)
            out.append(f'<rect x="{lx:.1f}" y="{ly:.1f}" width="{width:.1f}" '
                       f'height="{15 * len(legend) + 4}" fill="white" fill-opacity="0.85" '
                       f'stroke="#bbbbbb"/>')
            for k, (kind, c, dash, marker, label) in enumerate(legend):
                y = ly + 11 + 15 * k
                if kind == "band":
                    out.append(f'<rect x="{lx + 5:.1f}" y="{y - 5:.1f}" width="18" height="9" '
                               f'fill="{c}"/>')
                elif dash != "none":
                    extra = f' stroke-dasharray="{dash}"' if dash else ""
                    out.append(f'<line x1="{lx + 5:.1f}" y1="{y:.1f}" x2="{lx + 23:.1f}" '
                               f'y2="{y:.1f}" stroke="{c}" stroke-width="1.6"{extra}/>')
                if marker:
                    out.append(marker_svg(marker, lx + 14, y, c))
                out.append(f'<text x="{lx + 27:.1f}" y="{y + 4:.1f}" font-size="10">'
                           f'{escape(label)}</text>')
        return out


def marker_svg(marker, x, y, colour):
    if marker == "o":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.2" fill="{colour}"/>'
    if marker == "s":
        return f'<rect x="{x - 3:.1f}" y="{y - 3:.1f}" width="6" height="6" fill="{colour}"/>'
    if marker == "^":
        return (f'<polygon points="{x:.1f},{y - 4:.1f} {x - 3.6:.1f},{y + 2.6:.1f} '
                f'{x + 3.6:.1f},{y + 2.6:.1f}" fill="{colour}"/>')
    if marker == "x":
        return (f'<path d="M{x - 3.5:.1f},{y - 3.5:.1f}L{x + 3.5:.1f},{y + 3.5:.1f}'
                f'M{x - 3.5:.1f},{y + 3.5:.1f}L{x + 3.5:.1f},{y - 3.5:.1f}" stroke="{colour}" '
                f'stroke-width="1.8"/>')
    raise ValueError(marker)


def write_figure(path, panels, columns=2, width=460, height=320, title=None):
    """Panels on a grid of `columns`, each width x height pixels, written to `path`."""
    rows = (len(panels) + columns - 1) // columns
    top = 26 if title else 0
    W, H = columns * width, rows * height + top
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    if title:
        svg.append(f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="14" '
                   f'font-weight="bold">{escape(title)}</text>')
    for k, panel in enumerate(panels):
        svg += panel.render((k % columns) * width, top + (k // columns) * height, width, height)
    svg.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(svg) + "\n")
