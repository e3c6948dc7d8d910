"""The chart toolkit: one style, palette, ticks and render for every SVG chart; it takes plain data
(feature modules compute the data and call it)."""
