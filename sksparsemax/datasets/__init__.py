"""Data sets: the label-proportion simulation and multi-label benchmark loaders.

- :func:`make_label_proportions` -- the synthetic label-proportion documents of
  Martins & Astudillo (2016).
- :func:`load_mulan` -- read a MULAN multi-label data set (dense or sparse ARFF
  plus its XML label list).
- :func:`load_emotions` -- the emotions data set (MULAN), bundled with the package.
- :func:`fetch_mulan` -- download (once, checksum-checked) and load the MULAN
  data sets scene, emotions, yeast and medical with their train/test split.
- :func:`get_data_home` -- the cache folder of downloaded data
  (``$SKSPARSEMAX_DATA`` or ``~/sksparsemax_data``).
"""

from ._fetch import fetch_mulan, get_data_home
from ._label_proportions import make_label_proportions
from ._mulan import load_emotions, load_mulan

__all__ = [
    "fetch_mulan",
    "get_data_home",
    "load_emotions",
    "load_mulan",
    "make_label_proportions",
]
