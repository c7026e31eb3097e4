"""Concept sources: pseudo-labels from contrastive image–text models, calibrated against ground truth."""
