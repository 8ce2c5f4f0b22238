"""The dashboard's pages, one module per page: its `page()`, registered as an `st.Page` by
the navigation in `app.py`."""
