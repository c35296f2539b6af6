"""The published site: the static HTML leaderboard rendered from plain records and ratings (render), its labels in
the languages it speaks (labels), its inline SVG charts (svg), the manifest that makes a publish incremental
(published) and the jinja2 templates. It may import the rating math (leaderboard), the standard library and
third-party libraries, never arena: the app gathers what the site shows (arena.app.site_data) and hands it over."""
