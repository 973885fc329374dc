"""maskcost: what grammar-constrained decoding costs in LLM serving, predicted from a calibrated
discrete-event model of the engine step (see README.md)."""

__version__ = "0.1.0"
