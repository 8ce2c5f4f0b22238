"""The dashboard's pages, one script per page, run by the navigation in `app.py`."""
