import DiscfgCore
import Testing

@Suite("Start-up variables")
struct StartupVariablesTests {
    /// glibc's `sysdeps/generic/unsecvars.h` (2.39), the names it removes for setuid programs.
    static let glibcUnsecure = [
        "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LD_AUDIT", "LD_DEBUG", "LD_DEBUG_OUTPUT", "LD_DYNAMIC_WEAK",
        "LD_HWCAP_MASK", "LD_LIBRARY_PATH", "LD_ORIGIN_PATH", "LD_PRELOAD", "LD_PROFILE", "LD_SHOW_AUXV", "LD_USE_LOAD_BIAS",
        "LOCALDOMAIN", "LOCPATH", "MALLOC_TRACE", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR", "TZDIR",
    ]

    @Test("glibc's setuid list, the shells' and the runtimes' start-up variables are refused, each with its reason")
    func refused() {
        let others = [
            "DYLD_INSERT_LIBRARIES", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "PATH", "HOME", "BASH_FUNC_LS__",
            "NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT", "PYTHONBREAKPOINT", "PERL5OPT", "PERL5LIB",
            "PERLLIB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "MALLOC_ARENA_MAX",
            "OPENSSL_CONF", "SSLKEYLOGFILE", "GIT_CONFIG_COUNT", "NPM_CONFIG_NODE_OPTIONS", "ld_preload", "DISCFG_STORE", "DISCFG_TOKEN",
        ]
        for name in Self.glibcUnsecure + others {
            #expect(StartupVariables.reason(for: name) != nil, "\(name)")
        }
    }

    @Test("ordinary configuration is not refused")
    func allowed() {
        for name in ["DB_HOST", "DB_PASSWORD", "PORT", "LANG", "TZ", "NODE_ENV", "PYTHONUNBUFFERED", "APP_PATH", "APP_LD_PRELOAD", "LOG_LEVEL", "HOMEPAGE_URL"] {
            #expect(StartupVariables.reason(for: name) == nil, "\(name)")
        }
    }

    @Test("the refusal names the key, the config, the variable and --allow-env; an allowed name passes")
    func message() throws {
        let key = try Key("/app/ld_preload")
        let refused = #expect(throws: DiscfgError.self) {
            try StartupVariables.check("LD_PRELOAD", key: key, config: try ConfigName("app"), allowed: [], command: "discfg exec")
        }
        #expect(refused?.code == .invalidArgument)
        #expect(refused?.message.contains("/app/ld_preload") == true && refused?.message.contains("\"app\"") == true)
        #expect(refused?.message.contains("--allow-env LD_PRELOAD") == true)
        try StartupVariables.check("LD_PRELOAD", key: key, config: try ConfigName("app"), allowed: ["LD_PRELOAD"], command: "discfg exec")
    }
}
