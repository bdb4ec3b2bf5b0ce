/// Environment variables that change how a program loads or starts: which code runs,
/// where it is loaded from, what a shell executes before the command it was given.
///
/// Whoever can write a config decides the variables `discfg exec` sets and the lines
/// `discfg export --to env` writes for a shell to source; with one of these they would
/// run code of their choosing on every host that runs the command, as its user. So
/// these names are refused unless an operator allows each one by name (`--allow-env`).
///
/// The base is glibc's list of variables it removes for setuid programs
/// (`sysdeps/generic/unsecvars.h`: `LD_*`, `GCONV_PATH`, `GETCONF_DIR`,
/// `GLIBC_TUNABLES`, `HOSTALIASES`, `LOCALDOMAIN`, `LOCPATH`, `MALLOC_TRACE`, `NIS_PATH`,
/// `NLSPATH`, `RESOLV_HOST_CONF`, `RES_OPTIONS`, `TMPDIR`, `TZDIR`), with what shells and
/// the common language runtimes read at start-up added to it. Names are compared as
/// `export --to env` makes them: upper case.
public enum StartupVariables {
    /// One reason to refuse, and the names it covers.
    public struct Group: Sendable {
        /// What the variables do, for the refusal's message.
        public let reason: String
        /// Names refused exactly.
        public let names: Set<String>
        /// Names refused by how they begin.
        public let prefixes: [String]
    }

    /// Every refused name, by reason: the one list, read by `exec`, `export --to env`
    /// and their `--help`.
    public static let groups: [Group] = [
        // The dynamic loader (glibc and musl `LD_*`, macOS `DYLD_*`): LD_PRELOAD and
        // LD_AUDIT load a library into every program, LD_LIBRARY_PATH replaces the ones
        // it links; the rest change what it reads or writes (LD_DEBUG_OUTPUT, LD_PROFILE).
        Group(reason: "the dynamic loader reads it (libraries loaded into every program)", names: [], prefixes: ["LD_", "DYLD_"]),
        // glibc itself, from its setuid list: each names a file or directory it loads
        // code or data from (gconv modules, locales, message catalogs, the resolver's
        // host aliases), tunes the allocator, or moves where temporary files go.
        Group(
            reason: "the C library loads code or files from where it says (glibc refuses it for setuid programs)",
            names: [
                "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH", "NIS_PATH", "NLSPATH",
                "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR", "TZDIR",
            ],
            prefixes: ["MALLOC_"]
        ),
        // Shells: BASH_ENV and ENV are files a non-interactive bash or sh sources before
        // the command (their contents are expanded, so `$(…)` runs); SHELLOPTS, BASHOPTS
        // and PS4 turn on tracing whose prompt is expanded; IFS changes how words split;
        // PATH decides which program a bare name runs; BASH_FUNC_* are exported functions;
        // ZDOTDIR moves zsh's start-up files; HOME moves every dotfile and user library
        // directory (~/.bashrc, Python's user site-packages, ~/.node_modules); SHELL is
        // what programs run for `sh -c` (make, editors, script).
        Group(
            reason: "a shell runs code from it, or it decides which program or start-up file runs",
            names: [
                "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "PATH", "CDPATH", "ZDOTDIR", "PROMPT_COMMAND", "BASH_XTRACEFD",
                "BASH_LOADABLES_PATH", "HOME", "SHELL",
            ],
            prefixes: ["BASH_FUNC_"]
        ),
        // Language runtimes, each read at start-up to load modules or take options that do.
        Group(
            reason: "a language runtime loads code or takes options from it at start-up",
            names: [
                // Python: module paths, a start-up file, the debugger hook, warnings
                // filters (which import the category's module), bytecode caches.
                "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT", "PYTHONBREAKPOINT", "PYTHONUSERBASE", "PYTHONEXECUTABLE",
                "PYTHONWARNINGS", "PYTHONPLATLIBDIR", "PYTHONPYCACHEPREFIX", "PYTHONCASEOK",
                // Perl and Ruby: options (`-M`, `-r` load a module) and library paths.
                "PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "PERLIO", "PERL_MB_OPT", "PERL_MM_OPT",
                "RUBYOPT", "RUBYLIB", "RUBYSHELL", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE",
                // Node.js: `--require`/`--import` in its options, module paths.
                "NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE",
                // The JVM: `-javaagent:` in any of its option variables, the class path.
                "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "JAVA_OPTS", "CLASSPATH",
                // .NET: start-up hooks and profilers are assemblies or libraries it loads.
                "DOTNET_STARTUP_HOOKS", "DOTNET_ADDITIONAL_DEPS", "DOTNET_SHARED_STORE",
                // Go's toolchain (`-toolexec` in GOFLAGS runs a program per step).
                "GOFLAGS",
            ],
            prefixes: ["NPM_CONFIG_", "CORECLR_", "COR_PROFILER"]
        ),
        // Libraries and tools that load a module or run a command named by a variable:
        // OpenSSL's configuration loads engines and providers (shared objects), and
        // SSLKEYLOGFILE makes TLS libraries write session keys to a file; git, less, man,
        // ssh and sudo run the commands these name.
        Group(
            reason: "a library or tool loads a module or runs a command it names",
            names: [
                "OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES", "SSLKEYLOGFILE",
                "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_ASKPASS", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR",
                "GIT_PROXY_COMMAND", "GIT_TEMPLATE_DIR", "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "EDITOR", "VISUAL",
                "SSH_ASKPASS", "SUDO_ASKPASS", "GTK_MODULES", "GTK_PATH", "QT_PLUGIN_PATH", "GST_PLUGIN_PATH",
            ],
            prefixes: ["GIT_CONFIG"]
        ),
        // discfg's own: a command that runs discfg itself would send the token it was
        // given (DISCFG_TOKEN from the operator's environment) to a store the config
        // names, or read another config than the operator chose.
        Group(reason: "discfg reads it, so a command that runs discfg would use a store, token or config the config chose", names: [], prefixes: ["DISCFG_"]),
    ]

    /// Why `name` is refused, or nil when it is not.
    public static func reason(for name: String) -> String? {
        let upper = name.uppercased()
        return groups.first { group in group.names.contains(upper) || group.prefixes.contains { upper.hasPrefix($0) } }?.reason
    }

    /// A short list of what is refused, for `--help`.
    /// One logical line: the help page wraps it at the terminal's width.
    public static let summary = """
        LD_* and DYLD_* (the loader); glibc's setuid list (GCONV_PATH, LOCPATH, \
        GLIBC_TUNABLES, MALLOC_*, TMPDIR, ...); shell start-up (PATH, HOME, \
        SHELL, BASH_ENV, ENV, SHELLOPTS, BASHOPTS, PS4, IFS, BASH_FUNC_*, \
        ZDOTDIR); language runtimes (PYTHONPATH, PYTHONSTARTUP, PYTHONHOME, \
        PYTHONINSPECT, PYTHONWARNINGS, PERL5OPT, PERL5LIB, RUBYOPT, RUBYLIB, \
        NODE_OPTIONS, NODE_PATH, NPM_CONFIG_*, JAVA_TOOL_OPTIONS, _JAVA_OPTIONS, \
        JDK_JAVA_OPTIONS, CLASSPATH, DOTNET_STARTUP_HOOKS, ...); commands tools \
        run (OPENSSL_CONF, SSLKEYLOGFILE, GIT_SSH_COMMAND, PAGER, LESSOPEN, EDITOR, \
        ...); and discfg's own (DISCFG_*)
        """

    /// Throws when `name`, made from `key` of `config`, is refused and not in `allowed`.
    ///
    /// - Throws: `invalidArgument` naming the key, the variable, why it is refused and
    ///   how to allow it.
    /// - Parameters:
    ///   - command: the command refusing, for the message (`discfg exec`).
    ///   - otherWays: other ways out that command offers, e.g. "leave it out with --prefix or --only".
    ///   - allowing: how that face allows a name: `--allow-env` on the command line,
    ///     `allowEnv` in a request's query.
    public static func check(
        _ name: String, key: Key, config: ConfigName, allowed: Set<String>, command: String, otherWays: String? = nil,
        allowing: String = "--allow-env"
    ) throws {
        guard !allowed.contains(name), let reason = reason(for: name) else { return }
        let allow = allowing.hasPrefix("-") ? "\(allowing) \(name)" : "\(allowing)=\(name)"
        throw DiscfgError.invalid(
            allowing,
            "key \(key) of config \"\(config)\" would set \(name), which changes how programs load or start (\(reason)); \(command) refuses it: rename the key, \(otherWays.map { $0 + ", " } ?? "")or pass \(allow) if it is meant"
        )
    }
}
