"""Model files: the zip archive (:mod:`.archive`), the codec of the declared state
(:mod:`.codec`) and the checks of what is loaded (:mod:`.checks`), behind
:mod:`levy_sklearn.serialization`."""
