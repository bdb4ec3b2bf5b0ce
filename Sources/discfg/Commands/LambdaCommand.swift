import ArgumentParser
import DiscfgCore
import DiscfgDynamoDB
import DiscfgLambda
import DiscfgStores
import Foundation

struct LambdaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lambda",
        abstract: "Run as an AWS Lambda function (the custom runtime's bootstrap).",
        discussion: """
        Takes events from the Lambda Runtime API and answers them: API Gateway \
        requests (REST API payload 1.0, HTTP API and Function URL payload 2.0) go \
        through the same API as 'discfg serve'; DynamoDB Streams batches become \
        change notifications (EventBridge, webhooks; see 'discfg update \
        --notify'); scheduled events move running deployments along (one \
        deployment monitor pass: COMPLETE when due, rollback on a signal) and \
        expire due keys. Packaged as 'bootstrap' \
        (scripts/package-lambda), the binary runs this command by itself.

        Configured by environment:
          DISCFG_STORE             store URL (default dynamodb:///discfg, in the
                                   region AWS_REGION names)
          DISCFG_AUTH              iam (default), token, iam,token or none
          DISCFG_IAM_ROLES         PATTERN=ROLE[@SCOPE+SCOPE],...: roles of IAM
                                   principals; a scope is cfg or cfg:/prefix/
          DISCFG_IAM_DEFAULT_ROLE  the role of other IAM principals: read, write,
                                   admin or none (default)
          DISCFG_WEBHOOK_ALLOW     webhooks beyond public https hosts: http,
                                   private or both
          DISCFG_POLL_TIMEOUT      longest watch long poll in seconds (default 25)
          DISCFG_EVENTS_ENDPOINT   EventBridge endpoint override
          DISCFG_LOG_LEVEL         trace, debug, info (default), warning, error

        See deploy/README.md for packaging and deployment.
        """
    )

    func run() async throws {
        let status = await Self.runFunction(environment: ProcessInfo.processInfo.environment)
        throw ExitCode(status)
    }

    /// Runs the function with the store and settings the environment names.
    static func runFunction(environment: [String: String]) async -> Int32 {
        await LambdaRuntime.run(environment: environment) { _ in
            let access = try LambdaAccess(environment: environment)
            let options = try LambdaRuntime.apiOptions(environment: environment)
            let url = environment["DISCFG_STORE"].flatMap { $0.isEmpty ? nil : $0 } ?? "dynamodb:///\(DynamoDBLocation.defaultTable)"
            var opener = StoreOpener(environment: environment)
            opener.createTable = false
            let store = try opener.open(StoreLocation(parsing: url))
            // DynamoDB keeps the notification ledger with the configs; elsewhere it lives in memory.
            let ledger = store as? any DeliveryLedger ?? MemoryDeliveryLedger()
            return LambdaRuntime.Setup(
                store: store, ledger: ledger, eventBridge: LambdaRuntime.eventBridgeClient(environment: environment),
                access: access, options: options
            )
        }
    }
}
