import NIOSSL
import Synchronization

/// Who a client certificate names: the subject of the certificate a client presented
/// and the server's client CA verified. The principal of callers that authenticate with
/// a certificate (mutual TLS).
public struct CertificateSubject: Sendable, Hashable, CustomStringConvertible {
    /// The subject's attributes in the certificate's order, as (short name, value):
    /// `("O", "acme")`, `("CN", "deployer")`.
    public var attributes: [(type: String, value: String)]

    /// A subject of these attributes, in the certificate's order.
    public init(_ attributes: [(type: String, value: String)]) {
        self.attributes = attributes
    }

    /// The subject of `certificate`; attributes of kinds other than CN, O, OU, C, ST, L,
    /// emailAddress and UID are left out.
    public init(_ certificate: NIOSSLCertificate) {
        let names: [(SSLCertificateNameType, String)] = [
            (.commonName, "CN"), (.organization, "O"), (.organizationalUnit, "OU"), (.country, "C"), (.state, "ST"), (.city, "L"),
            (.emailAddress, "emailAddress"), (.userId, "UID"),
        ]
        attributes = certificate.subjectName.compactMap { name in
            names.first { $0.0 == name.type }.map { ($0.1, name.value) }
        }
    }

    /// The subject's common name, what the server's role list matches (`CN=deployer`);
    /// nil when it has none, or more than one: a subject of two names either of them
    /// (``commonNames``), and no one may choose which.
    public var commonName: String? {
        let names = commonNames
        return names.count == 1 ? names[0] : nil
    }

    /// Every common name of the subject, in the certificate's order.
    public var commonNames: [String] { attributes.filter { $0.type == "CN" }.map(\.value) }

    /// The distinguished name as RFC 4514 writes it, most specific first, each value
    /// escaped (``escaped(_:)``): `CN=deployer,O=acme`, and `CN=x,O=acme\,CN=ops` for an
    /// organisation named `acme,CN=ops`, which therefore cannot pass for a common name.
    public var description: String {
        attributes.reversed().map { "\($0.type)=\(Self.escaped($0.value))" }.joined(separator: ",")
    }

    /// `value` as an attribute value of an RFC 4514 string (section 2.4): `,` `+` `"` `\`
    /// `<` `>` `;` anywhere, `#` or a space at the start and a space at the end take a
    /// backslash before them, and NUL is `\00`; the rest is as it is.
    public static func escaped(_ value: String) -> String {
        let scalars = Array(value.unicodeScalars)
        var text = String.UnicodeScalarView()
        for (index, scalar) in scalars.enumerated() {
            switch scalar {
            case ",", "+", "\"", "\\", "<", ">", ";":
                text.append("\\")
                text.append(scalar)
            case "#" where index == 0, " " where index == 0 || index == scalars.count - 1:
                text.append("\\")
                text.append(scalar)
            case "\0":
                text.append(contentsOf: "\\00".unicodeScalars)
            default:
                text.append(scalar)
            }
        }
        return String(text)
    }

    public static func == (lhs: CertificateSubject, rhs: CertificateSubject) -> Bool {
        lhs.attributes.elementsEqual(rhs.attributes) { $0.type == $1.type && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for attribute in attributes {
            hasher.combine(attribute.type)
            hasher.combine(attribute.value)
        }
    }
}

/// The verified client certificate of one connection, known once its TLS handshake
/// completes (before any request on it can be read), and read by every request of it:
/// on the event loop by its handlers, elsewhere by the tasks that answer it.
public final class PeerCertificate: Sendable {
    private let subject = Mutex<CertificateSubject?>(nil)

    /// A connection's, empty until the handshake completes.
    public init() {}

    /// The subject of the connection's certificate; nil before the handshake completed.
    public var current: CertificateSubject? { subject.withLock { $0 } }

    /// Sets the subject the handshake verified.
    func set(_ value: CertificateSubject?) { subject.withLock { $0 = value } }
}
