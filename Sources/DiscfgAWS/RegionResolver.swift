import Foundation

/// Picks the AWS region the way the AWS CLI does, so discfg agrees with the operator's other tools.
public enum RegionResolver {
    /// No source named a region.
    public struct NotFound: Error, Sendable, CustomStringConvertible {
        /// The profile whose `region` setting was consulted.
        public let profile: String
        /// The config file that was read.
        public let configPath: String

        /// One line listing every place that was checked and how to fix it.
        public var description: String {
            "no AWS region configured: checked the explicit region option, AWS_REGION, AWS_DEFAULT_REGION "
                + "and 'region' of profile '\(profile)' in \(configPath); pass a region or set AWS_REGION"
        }
    }

    /// Explicit value → `AWS_REGION` → `AWS_DEFAULT_REGION` → the profile's `region` in the config file.
    ///
    /// - Parameters:
    ///   - explicit: A region given on the command line; it wins over everything.
    ///   - environment: The environment to consult (injected for tests).
    ///   - profile: A profile name overriding `AWS_PROFILE`.
    public static func resolve(
        explicit: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        profile: String? = nil
    ) throws -> String {
        if let region = explicit?.nonEmpty { return region }
        if let region = environment["AWS_REGION"].flatMap(\.nonEmpty) { return region }
        if let region = environment["AWS_DEFAULT_REGION"].flatMap(\.nonEmpty) { return region }
        let files = SharedConfigFiles(environment: environment)
        let name = profile ?? SharedConfigFiles.profileName(environment: environment)
        // The region belongs in the config file, but a credentials-file value is honoured too.
        if let region = files.profile(name)?["region"].flatMap(\.nonEmpty) { return region }
        throw NotFound(profile: name, configPath: files.configPath)
    }
}
