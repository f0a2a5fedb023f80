"""dpdl: regenerate the figures and tables of four papers on differentially private distributed learning."""

__version__ = "0.1.0"
