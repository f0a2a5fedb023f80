"""Losses and gradients of the models the studies train (logistic, softmax, lasso)."""
