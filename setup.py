"""The package layout pyproject.toml cannot say: templates/ and static/ sit beside app/ in a
checkout (where the web app finds them, app/config.py: resource_dir) and go into the wheel as
app/templates and app/static, so an installed llmbench serves every page from any folder."""

from setuptools import find_packages
from setuptools import setup

setup(
    packages=[*find_packages(include=["app", "app.*"]), "app.templates", "app.static"],
    package_dir={"app.templates": "templates", "app.static": "static"},
    package_data={
        "app.catalog": ["data/*"],
        "app.db": ["fresh_sqlite.sql"],
        "app.templates": ["**/*.html", "*.html"],
        "app.static": ["**/*"],
    },
)
