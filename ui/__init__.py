"""Streamlit building blocks shared by pages: URL/session state (`state`), the control panel
(`controls`) and running through the service (`runner`). Pages only; the library never
imports this package."""
