//! Sentence templates shared by the generator and the simulated model.
