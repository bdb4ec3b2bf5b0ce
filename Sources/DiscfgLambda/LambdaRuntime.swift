/// The Lambda face of discfg: a custom-runtime client of the Lambda Runtime API.
public enum DiscfgLambda {}
