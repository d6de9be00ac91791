//! Text normalisation for matching.
