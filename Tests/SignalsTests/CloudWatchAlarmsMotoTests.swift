import DiscfgAWS
import DiscfgCore
import DiscfgSignals
import DiscfgTestSupport
import Foundation
import Testing

/// ``CloudWatchAlarms`` and ``SignalReader`` against moto's CloudWatch, which speaks the
/// same JSON protocol real CloudWatch does: states as `SetAlarmState` sets them, a
/// missing alarm, more names than one call takes, and the endpoint from the environment.
@Suite("CloudWatch alarms against moto")
struct CloudWatchAlarmsMotoTests {
    @Test("an alarm read as OK, then ALARM, then INSUFFICIENT_DATA, with its reason; healthy only while OK")
    func statesFollowSetAlarmState() async throws {
        let moto = try await SharedMotoServer.shared.server()
        let name = MotoCloudWatch.uniqueName("checkout-5xx")
        try await MotoCloudWatch.createAlarm(name, on: moto)
        let alarms = MotoCloudWatch.alarms(moto)
        let reader = SignalReader(alarms: .client(alarms))
        defer { Task { await reader.shutdown() } }

        guard case .found(let initial)? = try await alarms.states(of: [name])[name] else {
            Issue.record("the alarm just made must be found"); return
        }
        #expect(initial.value == .ok)
        #expect(initial.kind == .metric)
        #expect(await reader.read([.alarm(name)]) == [.alarm(name): .healthy])

        for (value, expected) in [("ALARM", CloudWatchAlarmState.Value.alarm), ("INSUFFICIENT_DATA", .insufficientData), ("OK", .ok)] {
            try await MotoCloudWatch.setState(name, value, reason: "set by the test to \(value)", on: moto)
            guard case .found(let state)? = try await alarms.states(of: [name])[name] else {
                Issue.record("the alarm must still be found"); return
            }
            #expect(state.value == expected)
            #expect(state.reason == "set by the test to \(value)")
            let reading = await reader.read([.alarm(name)])[.alarm(name)]
            if expected == .ok {
                #expect(reading == .healthy)
            } else {
                #expect(reading == .unhealthy("the alarm is in \(value): set by the test to \(value)"))
            }
        }
    }

    @Test("an alarm CloudWatch does not have is an answer (missing), read as unhealthy, beside one it has")
    func missingAlarm() async throws {
        let moto = try await SharedMotoServer.shared.server()
        let present = MotoCloudWatch.uniqueName("present")
        let absent = MotoCloudWatch.uniqueName("absent")
        try await MotoCloudWatch.createAlarm(present, on: moto)
        let alarms = MotoCloudWatch.alarms(moto)
        let reader = SignalReader(alarms: .client(alarms))
        defer { Task { await reader.shutdown() } }

        let answers = try await alarms.states(of: [absent, present, absent])
        #expect(answers.count == 2)
        #expect(answers[absent] == .missing)
        #expect(answers[present].map { if case .found = $0 { true } else { false } } == true)
        let readings = await reader.read([.alarm(absent), .alarm(present), .health])
        #expect(readings[.alarm(absent)] == .unhealthy("no such alarm in CloudWatch"))
        #expect(readings[.alarm(present)] == .healthy)
        #expect(readings[.health] == .unknown("read by the monitor from agents' reports"))
    }

    @Test("230 names are asked for in 3 calls of at most 100, and every one is answered")
    func moreNamesThanOneCallTakes() async throws {
        let moto = try await SharedMotoServer.shared.server()
        let stem = MotoCloudWatch.uniqueName("many")
        let names = (0..<225).map { "\(stem)-\($0)" }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for slice in stride(from: 0, to: names.count, by: 45) {
                group.addTask {
                    for name in names[slice..<min(slice + 45, names.count)] { try await MotoCloudWatch.createAlarm(name, on: moto) }
                }
            }
            try await group.waitForAll()
        }
        let alarming = Set(names.enumerated().filter { $0.offset % 7 == 3 }.map(\.element))
        for name in alarming { try await MotoCloudWatch.setState(name, "ALARM", reason: "seventh", on: moto) }
        let missing = (0..<5).map { "\(stem)-missing-\($0)" }

        let alarms = MotoCloudWatch.alarms(moto)
        defer { Task { try? await alarms.shutdown() } }
        let answers = try await alarms.states(of: names + missing)
        #expect(answers.count == 230)
        for name in names {
            guard case .found(let state)? = answers[name] else { Issue.record("\(name) not found"); continue }
            #expect(state.value == (alarming.contains(name) ? .alarm : .ok), "\(name)")
        }
        for name in missing { #expect(answers[name] == .missing) }
        let calls = await alarms.client.metrics.metrics(for: "DescribeAlarms")
        #expect(calls.calls == 3)
    }

    @Test("the standard reader takes its region, credentials and endpoint from the environment, AWS_ENDPOINT_URL_CLOUDWATCH first")
    func standardReaderFromEnvironment() async throws {
        let moto = try await SharedMotoServer.shared.server()
        let name = MotoCloudWatch.uniqueName("env")
        try await MotoCloudWatch.createAlarm(name, on: moto)
        try await MotoCloudWatch.setState(name, "ALARM", reason: "from the environment", on: moto)
        let closed = "http://127.0.0.1:\(try MotoServer.freeLoopbackPort())"
        let credentials = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "discfg-test", "AWS_EC2_METADATA_DISABLED": "true",
                           "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"]
        for endpoints in [["AWS_ENDPOINT_URL_CLOUDWATCH": moto.endpoint.absoluteString, "AWS_ENDPOINT_URL": closed],
                          ["AWS_ENDPOINT_URL": moto.endpoint.absoluteString]] {
            let environment = credentials.merging(endpoints) { $1 }.merging(["AWS_REGION": "us-east-1"]) { $1 }
            let reader = SignalReader.standard(environment: environment)
            #expect(await reader.read([.alarm(name)])[.alarm(name)] == .unhealthy("the alarm is in ALARM: from the environment"))
            await reader.shutdown()
        }
        let regionless = SignalReader.standard(environment: credentials.merging(["AWS_ENDPOINT_URL": moto.endpoint.absoluteString]) { $1 })
        let reading = await regionless.read([.alarm(name)])[.alarm(name)]
        #expect(reading?.description.hasPrefix("unknown: CloudWatch alarms cannot be read: no AWS region configured") == true)
        await regionless.shutdown()
    }

    @Test("moto 5.2.1 does not check credentials unless told to enforce IAM: with it, an unknown key is refused as permission denied")
    func wrongCredentials() async throws {
        try await withServer(try await MotoServer.start(environment: ["INITIAL_NO_AUTH_ACTION_COUNT": "0"])) { moto in
            let stranger = StaticCredentialProvider(AWSCredentials(accessKeyID: "AKIDSTRANGER0000", secretAccessKey: "wrong"))
            let name = "guarded-alarm"
            let reader = SignalReader(alarms: .client(MotoCloudWatch.alarms(moto, credentials: stranger)))
            let error = try await #require(throws: DiscfgError.self) { try await reader.alarmStates([name]) }
            #expect(error.code == .permissionDenied)
            #expect(error.message.hasPrefix("cannot read CloudWatch alarm \"guarded-alarm\": CloudWatch refused the request ("))
            #expect(error.message.hasSuffix("check the credentials, their expiry and the cloudwatch:DescribeAlarms permission"))
            #expect(await reader.read([.alarm(name)])[.alarm(name)] == .unknown(error.message))
            await reader.shutdown()
        }
    }

    @Test("the endpoint variables: the CloudWatch one before the general one, empty ones skipped")
    func endpointVariables() {
        typealias Settings = CloudWatchAlarms.Configuration
        #expect(Settings.endpoint(environment: [:]) == nil)
        #expect(Settings.endpoint(environment: ["AWS_ENDPOINT_URL": "http://a:1"]) == URL(string: "http://a:1"))
        #expect(Settings.endpoint(environment: ["AWS_ENDPOINT_URL": "http://a:1", "AWS_ENDPOINT_URL_CLOUDWATCH": "http://b:2"]) == URL(string: "http://b:2"))
        #expect(Settings.endpoint(environment: ["AWS_ENDPOINT_URL": "http://a:1", "AWS_ENDPOINT_URL_CLOUDWATCH": ""]) == URL(string: "http://a:1"))
    }
}
