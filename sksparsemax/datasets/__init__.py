"""Data sets: the label-proportion simulation and multi-label benchmark loaders.

- :func:`make_label_proportions` -- the synthetic label-proportion documents of
  Martins & Astudillo (2016).
- :func:`load_mulan` -- read a MULAN multi-label data set (dense or sparse ARFF
  plus its XML label list).
- :func:`load_emotions` -- the emotions data set (MULAN), bundled with the package.
"""

from ._label_proportions import make_label_proportions
from ._mulan import load_emotions, load_mulan

__all__ = ["load_emotions", "load_mulan", "make_label_proportions"]
