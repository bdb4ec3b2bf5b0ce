import DiscfgCore
@testable import DiscfgLambda
import Testing

@Suite("Lambda: access settings")
struct LambdaAccessTests {
    @Test("DISCFG_AUTH, DISCFG_IAM_ROLES and DISCFG_IAM_DEFAULT_ROLE are read, first matching rule wins")
    func readsSettings() throws {
        let access = try LambdaAccess(environment: [
            "DISCFG_AUTH": "iam, token",
            "DISCFG_IAM_ROLES": "arn:aws:iam::1:role/ci-*=read@app+web, arn:aws:iam::1:user/a=b=write, arn:aws:iam::1:*=admin",
            "DISCFG_IAM_DEFAULT_ROLE": "none",
        ])
        #expect(access.modes == [.iam, .token])
        let ci = try #require(access.caller(forPrincipal: "arn:aws:iam::1:role/ci-deploy"))
        #expect(ci.name == "iam:arn:aws:iam::1:role/ci-deploy" && ci.role == .read)
        #expect(ci.configs == [try ConfigName("app"), try ConfigName("web")])
        #expect(access.caller(forPrincipal: "arn:aws:iam::1:user/a=b")?.role == .write, "IAM names may hold '='; the last one splits")
        #expect(access.caller(forPrincipal: "arn:aws:iam::1:user/zed")?.role == .admin)
        #expect(access.caller(forPrincipal: "arn:aws:iam::2:user/zed") == nil, "no rule and default none: refused")
        #expect(try LambdaAccess(environment: [:]) == LambdaAccess(modes: .iam, rules: [], defaultRole: nil), "IAM, refusing principals no rule names")
        #expect(try LambdaAccess(environment: [:]).caller(forPrincipal: "arn:aws:iam::1:user/anyone") == nil)
        #expect(try LambdaAccess(environment: ["DISCFG_IAM_DEFAULT_ROLE": "read"]).caller(forPrincipal: "arn:aws:iam::1:user/anyone")?.role == .read)
        #expect(try LambdaAccess(environment: ["DISCFG_AUTH": "none"]).modes.isEmpty)
    }

    @Test("bad settings name the variable", arguments: [
        ["DISCFG_AUTH": "password"],
        ["DISCFG_AUTH": "none,iam"],
        ["DISCFG_AUTH": ""],
        ["DISCFG_AUTH": ","],
        ["DISCFG_AUTH": " , "],
        ["DISCFG_AUTH": "iam,"],
        ["DISCFG_IAM_ROLES": "arn:aws:iam::1:user/a=write@"],
        ["DISCFG_IAM_ROLES": "arn:aws:iam::1:user/a=write@app+"],
        ["DISCFG_IAM_ROLES": "arn:aws:iam::1:user/a"],
        ["DISCFG_IAM_ROLES": "arn:aws:iam::1:user/a=root"],
        ["DISCFG_IAM_ROLES": "arn:aws:iam::1:user/a=read@bad name"],
        ["DISCFG_IAM_DEFAULT_ROLE": "superuser"],
    ])
    func badSettings(_ environment: [String: String]) {
        #expect {
            _ = try LambdaAccess(environment: environment)
        } throws: { error in
            guard let error = error as? DiscfgError else { return false }
            return error.code == .invalidArgument && environment.keys.contains { error.message.contains($0) || error.field == $0 }
        }
    }

    @Test("* matches any run of characters, anywhere in the pattern")
    func wildcards() {
        #expect(LambdaAccess.matches("arn:aws:sts::1:assumed-role/admins/alice", pattern: "arn:aws:sts::1:assumed-role/admins/*"))
        #expect(LambdaAccess.matches("abc", pattern: "*"))
        #expect(LambdaAccess.matches("a-x-b-y-c", pattern: "a*b*c"))
        #expect(!LambdaAccess.matches("a-x-b-y", pattern: "a*b*c"))
        #expect(!LambdaAccess.matches("arn:aws:iam::1:role/ci", pattern: "arn:aws:iam::1:role/ci-*"))
        #expect(LambdaAccess.matches("exact", pattern: "exact") && !LambdaAccess.matches("exact!", pattern: "exact"))
    }
}
