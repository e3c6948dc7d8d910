"""llmbench. The web app is built by app.factory.create_app; importing this package starts
and imports nothing."""
