/// Flag sets the OFREP tests of serve and the agent evaluate: `web` has one flag of each
/// value type (boolean and string with targeting, integer, float written `10.0`, object with
/// metadata) and a DISABLED one; `ops` has flags whose evaluation fails (PARSE_ERROR for an
/// unknown operator, GENERAL for targeting that names no variant).
public enum OFREPFlagSets {
    public static let web = #"""
    {
      "flags": {
        "bool-flag": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
          "targeting": {"if": [{"==": [{"var": "plan"}, "pro"]}, "on", null]}},
        "string-flag": {"state": "ENABLED", "variants": {"red": "#f00", "blue": "#00f"}, "defaultVariant": "red",
          "targeting": {"if": [{"ends_with": [{"var": "email"}, "@example.org"]}, "blue", null]}},
        "int-flag": {"state": "ENABLED", "variants": {"small": 3, "big": 9007199254740991}, "defaultVariant": "small"},
        "float-flag": {"state": "ENABLED", "variants": {"half": 0.5, "ten": 10.0}, "defaultVariant": "ten"},
        "object-flag": {"state": "ENABLED", "variants": {"a": {"size": 1, "ratio": 2.0, "tags": ["x"]}}, "defaultVariant": "a",
          "metadata": {"owner": "web"}},
        "off-flag": {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"}
      },
      "metadata": {"flagSetId": "web", "version": 2}
    }
    """#

    public static let ops = #"""
    {
      "flags": {
        "broken-rule": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": {"no_such_operator": [1]}},
        "bad-variant": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "targeting": {"if": [true, "missing", null]}}
      }
    }
    """#
}
