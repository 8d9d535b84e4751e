"""The paper's experiments: runners, results store and figures."""
