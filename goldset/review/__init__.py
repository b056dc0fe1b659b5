"""Expert review of a sample of the pairs in Label Studio.

Only the settings exist so far (``review`` section of goldset.yaml); sampling, push and pull are on the roadmap.
"""
