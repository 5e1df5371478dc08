"""PNG bytes from a matplotlib Figure, stamped with the run's label and carrying its own titles and labels.

Each PNG holds a `Labels` text chunk: JSON of the figure's title, every axes' x/y labels and the label stamped
on it, read from the Figure object just before saving. A report checker (tests, a reader without a screen)
can then see what each image says without looking at it (`png_labels`). No "Software" entry and no time
are written, so the same tables give byte-identical files.
"""

from __future__ import annotations

import io
import json
import struct
import zlib

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

DPI = 100
LABELS_KEY = "Labels"
NOTE_INCHES = 0.15


def figure_labels(figure: Figure, note: str | None) -> dict:
    """The figure's title (its first titled axes), each axes' labels (a colourbar's is its y label)."""
    axes = [{"x": a.get_xlabel(), "y": a.get_ylabel(), "colorbar": _is_colorbar(a)} for a in figure.axes]
    titles = [a.get_title() for a in figure.axes if a.get_title()]
    return {"title": titles[0] if titles else "", "axes": axes, "note": note or ""}


def _is_colorbar(axes) -> bool:
    # Colorbar axes carry a `_colorbar` attribute (matplotlib ≥ 3.6); a plain axes does not.
    return getattr(axes, "_colorbar", None) is not None


def png_bytes(figure: Figure, note: str | None = None) -> bytes:
    """Stamp `note` (e.g. the oracle label) under the plot, then save with the labels chunk."""
    if note:
        figure.text(0.01, 0.005, note, fontsize=6, color="dimgrey", ha="left", va="bottom", wrap=True)
        # Room for one line of small text under the x label, whatever the figure's height.
        figure.subplots_adjust(bottom=figure.subplotpars.bottom + NOTE_INCHES / figure.get_figheight())
    FigureCanvasAgg(figure)
    labels = json.dumps(figure_labels(figure, note), ensure_ascii=True, sort_keys=True)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None, LABELS_KEY: labels})
    return buffer.getvalue()


def png_text(png: bytes) -> dict[str, str]:
    """The tEXt/zTXt/iTXt chunks of a PNG (stdlib only)."""
    chunks, position = {}, 8
    while position + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[position : position + 8])
        data = png[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"tEXt":
            key, _, value = data.partition(b"\0")
            chunks[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"zTXt":
            key, _, rest = data.partition(b"\0")
            chunks[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
        elif kind == b"iTXt":
            key, _, rest = data.partition(b"\0")
            compressed, rest = rest[0], rest[2:]
            text = rest.split(b"\0", 2)[2]
            chunks[key.decode("latin-1")] = (zlib.decompress(text) if compressed else text).decode("utf-8")
    return chunks


def png_labels(png: bytes) -> dict:
    """What `png_bytes` recorded: {"title", "axes": [{"x", "y", "colorbar"}], "note"}; {} if absent."""
    text = png_text(png).get(LABELS_KEY)
    return json.loads(text) if text else {}
