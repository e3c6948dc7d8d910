"""The colours and font every chart draws with, pygal's and the line charts' alike (no pygal here,
so the line charts load without it)."""

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif"

# One colour a series, in this order.
PALETTE = (
    "#2f5bea",
    "#1f8a4c",
    "#c0392b",
    "#a86500",
    "#7d3cbc",
    "#1c6fa8",
    "#d35400",
    "#5d6778",
    "#16a085",
    "#8e44ad",
)

INK = "#1d2330"  # titles, labels, legends
MUTED = "#5d6778"  # axis values and "no data"
GUIDE = "#dde1e8"  # the dashed guide lines
SUBTLE = "#c9ced8"  # pygal's minor lines
