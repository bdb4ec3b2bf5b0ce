import Foundation

/// One alarm raised on a config, under the etcd member it was raised for, as etcd keeps
/// each alarm under a member id (an ACTIVATE for member 0 is kept beside the member's own).
///
/// Settings spell it `NOSPACE` for the config's own member, the one member every etcd
/// server over the config answers as, and `NOSPACE@ID` for member `ID` (decimal, as
/// `etcdctl alarm list` prints it), such as `NOSPACE@0`. An alarm stored before member
/// ids were kept (`NOSPACE`) so stays the config's own member's, as it was.
///
/// ```swift
/// let raised: Set<RaisedAlarm> = [.noSpace, RaisedAlarm(.noSpace, member: 0)]
/// raised.map(\.name)  // ["NOSPACE", "NOSPACE@0"] in some order
/// ```
public struct RaisedAlarm: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// What is raised.
    public var alarm: ConfigAlarm
    /// The etcd member id it is raised under; nil for the config's own member (whose id
    /// only the etcd face knows: it derives it from the config's name).
    public var member: UInt64?

    /// An alarm raised under `member`, or under the config's own member when nil.
    public init(_ alarm: ConfigAlarm, member: UInt64? = nil) {
        self.alarm = alarm
        self.member = member
    }

    /// The config's own member's NOSPACE.
    public static let noSpace = RaisedAlarm(.noSpace)

    /// The alarm named `name`: `NOSPACE`, or `NOSPACE@ID` with a decimal member id.
    /// - Throws: `invalidArgument` (field `alarms`) naming the alarms there are.
    public init(named name: String) throws {
        guard let at = name.firstIndex(of: "@") else {
            self.init(try ConfigAlarm(named: name))
            return
        }
        let digits = name[name.index(after: at)...]
        // One spelling per member: decimal digits, without leading zeros.
        let isDecimal = digits.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard isDecimal, digits == "0" || !digits.hasPrefix("0"), let member = UInt64(digits) else {
            throw DiscfgError.invalid(
                "alarms",
                "\"\(name.debugEscaped)\" does not name a member: after @ comes an etcd member id in decimal (0 to \(UInt64.max)), as in NOSPACE@0"
            )
        }
        self.init(try ConfigAlarm(named: String(name[..<at])), member: member)
    }

    /// How settings spell it: `NOSPACE`, or `NOSPACE@ID` under member `ID`.
    public var name: String { member.map { "\(alarm.rawValue)@\($0)" } ?? alarm.rawValue }

    public var description: String { name }

    /// The config's own member's alarms first, then by member id, then by alarm.
    public static func < (lhs: RaisedAlarm, rhs: RaisedAlarm) -> Bool { lhs.order < rhs.order }

    private var order: (Int, UInt64, String) { (member == nil ? 0 : 1, member ?? 0, alarm.rawValue) }

    /// `alarms` by name, in order (``<(_:_:)``): how settings write them.
    static func names(_ alarms: Set<RaisedAlarm>) -> [String] { alarms.sorted().map(\.name) }

    /// The alarms named in `container` under `key`, checked by ``init(named:)``; nil when absent.
    /// A bad name is refused under `key` (`alarms`, `raiseAlarms`, `disarmAlarms`).
    static func decode<K: CodingKey>(_ container: KeyedDecodingContainer<K>, forKey key: K) throws -> Set<RaisedAlarm>? {
        do {
            return try container.decodeIfPresent([String].self, forKey: key).map { Set(try $0.map(RaisedAlarm.init(named:))) }
        } catch var error as DiscfgError {
            error.field = key.stringValue
            throw error
        }
    }
}

extension ConfigSettings {
    /// Whether `alarm` is raised under any member: what refuses changes, as in etcd,
    /// where any member's NOSPACE caps the whole cluster.
    public func isRaised(_ alarm: ConfigAlarm) -> Bool { alarms.contains { $0.alarm == alarm } }
}
