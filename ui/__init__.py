"""Streamlit building blocks shared by pages: the one URL/state binder (`state`) with the typed
view models it round-trips (`view`), the control panel (`controls`), running through the service
(`runner`), the one way to draw a figure (`charts`), presenter mode (`presenter`), downloads
(`downloads`) and showing user-supplied strings as text (`text`). Pages only; the library never
imports this package. The server's live state is the runtime's (`runtime.current()`)."""
