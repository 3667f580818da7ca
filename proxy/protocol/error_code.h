// Every Kafka error code (org.apache.kafka.common.protocol.Errors), with its
// name, whether Kafka's clients retry it (a RetriableException subclass), and
// for the ones the proxy reasons about, their meaning in a few words.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pp {

// X(Enumerator, code, KAFKA_NAME, retriable, meaning)
#define PP_KAFKA_ERROR_CODES(X)                                                                                        \
  X(kUnknownServerError, -1, "UNKNOWN_SERVER_ERROR", false, "the broker hit an unexpected error")                      \
  X(kNone, 0, "NONE", false, "success")                                                                                \
  X(kOffsetOutOfRange, 1, "OFFSET_OUT_OF_RANGE", false, "")                                                            \
  X(kCorruptMessage, 2, "CORRUPT_MESSAGE", true, "record CRC or size check failed")                                    \
  X(kUnknownTopicOrPartition, 3, "UNKNOWN_TOPIC_OR_PARTITION", true, "topic or partition unknown to this broker")      \
  X(kInvalidFetchSize, 4, "INVALID_FETCH_SIZE", false, "")                                                             \
  X(kLeaderNotAvailable, 5, "LEADER_NOT_AVAILABLE", true, "partition has no leader right now")                         \
  X(kNotLeaderOrFollower, 6, "NOT_LEADER_OR_FOLLOWER", true, "this broker is not the partition's leader")              \
  X(kRequestTimedOut, 7, "REQUEST_TIMED_OUT", true, "acks=all wait timed out (maybe appended)")                        \
  X(kBrokerNotAvailable, 8, "BROKER_NOT_AVAILABLE", false, "")                                                         \
  X(kReplicaNotAvailable, 9, "REPLICA_NOT_AVAILABLE", true, "")                                                        \
  X(kMessageTooLarge, 10, "MESSAGE_TOO_LARGE", false, "batch larger than max.message.bytes")                           \
  X(kStaleControllerEpoch, 11, "STALE_CONTROLLER_EPOCH", false, "")                                                    \
  X(kOffsetMetadataTooLarge, 12, "OFFSET_METADATA_TOO_LARGE", false, "")                                               \
  X(kNetworkException, 13, "NETWORK_EXCEPTION", true, "connection lost mid-request (maybe appended)")                  \
  X(kCoordinatorLoadInProgress, 14, "COORDINATOR_LOAD_IN_PROGRESS", true, "")                                          \
  X(kCoordinatorNotAvailable, 15, "COORDINATOR_NOT_AVAILABLE", true, "")                                               \
  X(kNotCoordinator, 16, "NOT_COORDINATOR", true, "")                                                                  \
  X(kInvalidTopicException, 17, "INVALID_TOPIC_EXCEPTION", false, "topic name is invalid")                             \
  X(kRecordListTooLarge, 18, "RECORD_LIST_TOO_LARGE", false, "record set larger than a segment")                       \
  X(kNotEnoughReplicas, 19, "NOT_ENOUGH_REPLICAS", true, "ISR below min.insync.replicas, not appended")                \
  X(kNotEnoughReplicasAfterAppend, 20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", true,                                       \
    "appended on the leader, ISR below minimum afterwards")                                                            \
  X(kInvalidRequiredAcks, 21, "INVALID_REQUIRED_ACKS", false, "acks not in {-1,0,1}")                                  \
  X(kIllegalGeneration, 22, "ILLEGAL_GENERATION", false, "")                                                           \
  X(kInconsistentGroupProtocol, 23, "INCONSISTENT_GROUP_PROTOCOL", false, "")                                          \
  X(kInvalidGroupId, 24, "INVALID_GROUP_ID", false, "")                                                                \
  X(kUnknownMemberId, 25, "UNKNOWN_MEMBER_ID", false, "")                                                              \
  X(kInvalidSessionTimeout, 26, "INVALID_SESSION_TIMEOUT", false, "")                                                  \
  X(kRebalanceInProgress, 27, "REBALANCE_IN_PROGRESS", false, "")                                                      \
  X(kInvalidCommitOffsetSize, 28, "INVALID_COMMIT_OFFSET_SIZE", false, "")                                             \
  X(kTopicAuthorizationFailed, 29, "TOPIC_AUTHORIZATION_FAILED", false, "not authorized for the topic")                \
  X(kGroupAuthorizationFailed, 30, "GROUP_AUTHORIZATION_FAILED", false, "")                                            \
  X(kClusterAuthorizationFailed, 31, "CLUSTER_AUTHORIZATION_FAILED", false, "not authorized for the cluster")          \
  X(kInvalidTimestamp, 32, "INVALID_TIMESTAMP", false, "timestamp out of range")                                       \
  X(kUnsupportedSaslMechanism, 33, "UNSUPPORTED_SASL_MECHANISM", false, "")                                            \
  X(kIllegalSaslState, 34, "ILLEGAL_SASL_STATE", false, "")                                                            \
  X(kUnsupportedVersion, 35, "UNSUPPORTED_VERSION", false, "API version not supported")                                \
  X(kTopicAlreadyExists, 36, "TOPIC_ALREADY_EXISTS", false, "")                                                        \
  X(kInvalidPartitions, 37, "INVALID_PARTITIONS", false, "")                                                           \
  X(kInvalidReplicationFactor, 38, "INVALID_REPLICATION_FACTOR", false, "")                                            \
  X(kInvalidReplicaAssignment, 39, "INVALID_REPLICA_ASSIGNMENT", false, "")                                            \
  X(kInvalidConfig, 40, "INVALID_CONFIG", false, "")                                                                   \
  X(kNotController, 41, "NOT_CONTROLLER", true, "")                                                                    \
  X(kInvalidRequest, 42, "INVALID_REQUEST", false, "malformed request")                                                \
  X(kUnsupportedForMessageFormat, 43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", false, "feature needs a newer message format") \
  X(kPolicyViolation, 44, "POLICY_VIOLATION", false, "rejected by a policy")                                           \
  X(kOutOfOrderSequenceNumber, 45, "OUT_OF_ORDER_SEQUENCE_NUMBER", false, "sequence gap or expired duplicate")         \
  X(kDuplicateSequenceNumber, 46, "DUPLICATE_SEQUENCE_NUMBER", false, "duplicate of an earlier batch (0.11 brokers)")  \
  X(kInvalidProducerEpoch, 47, "INVALID_PRODUCER_EPOCH", false, "stale producer epoch")                                \
  X(kInvalidTxnState, 48, "INVALID_TXN_STATE", false, "")                                                              \
  X(kInvalidProducerIdMapping, 49, "INVALID_PRODUCER_ID_MAPPING", false, "")                                           \
  X(kInvalidTransactionTimeout, 50, "INVALID_TRANSACTION_TIMEOUT", false, "")                                          \
  X(kConcurrentTransactions, 51, "CONCURRENT_TRANSACTIONS", true, "")                                                  \
  X(kTransactionCoordinatorFenced, 52, "TRANSACTION_COORDINATOR_FENCED", false, "")                                    \
  X(kTransactionalIdAuthorizationFailed, 53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", false, "")                       \
  X(kSecurityDisabled, 54, "SECURITY_DISABLED", false, "")                                                             \
  X(kOperationNotAttempted, 55, "OPERATION_NOT_ATTEMPTED", false, "")                                                  \
  X(kKafkaStorageError, 56, "KAFKA_STORAGE_ERROR", true, "log directory failure")                                      \
  X(kLogDirNotFound, 57, "LOG_DIR_NOT_FOUND", false, "")                                                               \
  X(kSaslAuthenticationFailed, 58, "SASL_AUTHENTICATION_FAILED", false, "")                                            \
  X(kUnknownProducerId, 59, "UNKNOWN_PRODUCER_ID", false, "broker lost this producer's state")                         \
  X(kReassignmentInProgress, 60, "REASSIGNMENT_IN_PROGRESS", false, "")                                                \
  X(kDelegationTokenAuthDisabled, 61, "DELEGATION_TOKEN_AUTH_DISABLED", false, "")                                     \
  X(kDelegationTokenNotFound, 62, "DELEGATION_TOKEN_NOT_FOUND", false, "")                                             \
  X(kDelegationTokenOwnerMismatch, 63, "DELEGATION_TOKEN_OWNER_MISMATCH", false, "")                                   \
  X(kDelegationTokenRequestNotAllowed, 64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", false, "")                          \
  X(kDelegationTokenAuthorizationFailed, 65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", false, "")                       \
  X(kDelegationTokenExpired, 66, "DELEGATION_TOKEN_EXPIRED", false, "")                                                \
  X(kInvalidPrincipalType, 67, "INVALID_PRINCIPAL_TYPE", false, "")                                                    \
  X(kNonEmptyGroup, 68, "NON_EMPTY_GROUP", false, "")                                                                  \
  X(kGroupIdNotFound, 69, "GROUP_ID_NOT_FOUND", false, "")                                                             \
  X(kFetchSessionIdNotFound, 70, "FETCH_SESSION_ID_NOT_FOUND", true, "")                                               \
  X(kInvalidFetchSessionEpoch, 71, "INVALID_FETCH_SESSION_EPOCH", true, "")                                            \
  X(kListenerNotFound, 72, "LISTENER_NOT_FOUND", true, "")                                                             \
  X(kTopicDeletionDisabled, 73, "TOPIC_DELETION_DISABLED", false, "")                                                  \
  X(kFencedLeaderEpoch, 74, "FENCED_LEADER_EPOCH", true, "leader epoch in request is older than the broker's")         \
  X(kUnknownLeaderEpoch, 75, "UNKNOWN_LEADER_EPOCH", true, "leader epoch in request is newer than the broker's")       \
  X(kUnsupportedCompressionType, 76, "UNSUPPORTED_COMPRESSION_TYPE", false, "compression codec not allowed")           \
  X(kStaleBrokerEpoch, 77, "STALE_BROKER_EPOCH", false, "")                                                            \
  X(kOffsetNotAvailable, 78, "OFFSET_NOT_AVAILABLE", true, "")                                                         \
  X(kMemberIdRequired, 79, "MEMBER_ID_REQUIRED", false, "")                                                            \
  X(kPreferredLeaderNotAvailable, 80, "PREFERRED_LEADER_NOT_AVAILABLE", true, "")                                      \
  X(kGroupMaxSizeReached, 81, "GROUP_MAX_SIZE_REACHED", false, "")                                                     \
  X(kFencedInstanceId, 82, "FENCED_INSTANCE_ID", false, "")                                                            \
  X(kEligibleLeadersNotAvailable, 83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", true, "")                                      \
  X(kElectionNotNeeded, 84, "ELECTION_NOT_NEEDED", false, "")                                                          \
  X(kNoReassignmentInProgress, 85, "NO_REASSIGNMENT_IN_PROGRESS", false, "")                                           \
  X(kGroupSubscribedToTopic, 86, "GROUP_SUBSCRIBED_TO_TOPIC", false, "")                                               \
  X(kInvalidRecord, 87, "INVALID_RECORD", false, "record failed validation")                                           \
  X(kUnstableOffsetCommit, 88, "UNSTABLE_OFFSET_COMMIT", true, "")                                                     \
  X(kThrottlingQuotaExceeded, 89, "THROTTLING_QUOTA_EXCEEDED", true, "")                                               \
  X(kProducerFenced, 90, "PRODUCER_FENCED", false, "producer fenced by a newer epoch")                                 \
  X(kResourceNotFound, 91, "RESOURCE_NOT_FOUND", false, "")                                                            \
  X(kDuplicateResource, 92, "DUPLICATE_RESOURCE", false, "")                                                           \
  X(kUnacceptableCredential, 93, "UNACCEPTABLE_CREDENTIAL", false, "")                                                 \
  X(kInconsistentVoterSet, 94, "INCONSISTENT_VOTER_SET", false, "")                                                    \
  X(kInvalidUpdateVersion, 95, "INVALID_UPDATE_VERSION", false, "")                                                    \
  X(kFeatureUpdateFailed, 96, "FEATURE_UPDATE_FAILED", false, "")                                                      \
  X(kPrincipalDeserializationFailure, 97, "PRINCIPAL_DESERIALIZATION_FAILURE", false, "")                              \
  X(kSnapshotNotFound, 98, "SNAPSHOT_NOT_FOUND", false, "")                                                            \
  X(kUnknownTopicId, 100, "UNKNOWN_TOPIC_ID", true, "topic id unknown")                                                \
  X(kDuplicateBrokerRegistration, 101, "DUPLICATE_BROKER_REGISTRATION", false, "")                                     \
  X(kBrokerIdNotRegistered, 102, "BROKER_ID_NOT_REGISTERED", false, "")                                                \
  X(kInconsistentTopicId, 103, "INCONSISTENT_TOPIC_ID", true, "")                                                      \
  X(kInconsistentClusterId, 104, "INCONSISTENT_CLUSTER_ID", false, "")                                                 \
  X(kTransactionalIdNotFound, 105, "TRANSACTIONAL_ID_NOT_FOUND", false, "")                                            \
  X(kFetchSessionTopicIdError, 106, "FETCH_SESSION_TOPIC_ID_ERROR", true, "")                                          \
  X(kIneligibleReplica, 107, "INELIGIBLE_REPLICA", false, "")                                                          \
  X(kNewLeaderElected, 108, "NEW_LEADER_ELECTED", false, "")                                                           \
  X(kOffsetMovedToTieredStorage, 109, "OFFSET_MOVED_TO_TIERED_STORAGE", false, "")                                     \
  X(kFencedMemberEpoch, 110, "FENCED_MEMBER_EPOCH", false, "")                                                         \
  X(kUnreleasedInstanceId, 111, "UNRELEASED_INSTANCE_ID", false, "")                                                   \
  X(kUnsupportedAssignor, 112, "UNSUPPORTED_ASSIGNOR", false, "")                                                      \
  X(kStaleMemberEpoch, 113, "STALE_MEMBER_EPOCH", false, "")                                                           \
  X(kMismatchedEndpointType, 114, "MISMATCHED_ENDPOINT_TYPE", false, "")                                               \
  X(kUnsupportedEndpointType, 115, "UNSUPPORTED_ENDPOINT_TYPE", false, "")                                             \
  X(kUnknownControllerId, 116, "UNKNOWN_CONTROLLER_ID", false, "")                                                     \
  X(kUnknownSubscriptionId, 117, "UNKNOWN_SUBSCRIPTION_ID", false, "")                                                 \
  X(kTelemetryTooLarge, 118, "TELEMETRY_TOO_LARGE", false, "")                                                         \
  X(kInvalidRegistration, 119, "INVALID_REGISTRATION", false, "")                                                      \
  X(kTransactionAbortable, 120, "TRANSACTION_ABORTABLE", false, "transaction must be aborted")                         \
  X(kInvalidRecordState, 121, "INVALID_RECORD_STATE", false, "")                                                       \
  X(kShareSessionNotFound, 122, "SHARE_SESSION_NOT_FOUND", true, "")                                                   \
  X(kInvalidShareSessionEpoch, 123, "INVALID_SHARE_SESSION_EPOCH", true, "")                                           \
  X(kFencedStateEpoch, 124, "FENCED_STATE_EPOCH", false, "")                                                           \
  X(kInvalidVoterKey, 125, "INVALID_VOTER_KEY", false, "")                                                             \
  X(kDuplicateVoter, 126, "DUPLICATE_VOTER", false, "")                                                                \
  X(kVoterNotFound, 127, "VOTER_NOT_FOUND", false, "")                                                                 \
  X(kInvalidRegularExpression, 128, "INVALID_REGULAR_EXPRESSION", false, "")

enum class ErrorCode : std::int16_t {
#define PP_ERROR_ENUMERATOR(e, code, name, retriable, meaning) e = (code),
  PP_KAFKA_ERROR_CODES(PP_ERROR_ENUMERATOR)
#undef PP_ERROR_ENUMERATOR
};

// "NOT_LEADER_OR_FOLLOWER"; "UNKNOWN(-7)"-style text for codes Kafka has not defined.
std::string_view error_name(ErrorCode code);
// Whether a Kafka client would retry the request (RetriableException).
bool is_retriable(ErrorCode code);
std::string_view error_meaning(ErrorCode code);
// Parses "NOT_LEADER_OR_FOLLOWER" (as the test cluster control commands use).
std::optional<ErrorCode> error_from_name(std::string_view name);

}  // namespace pp
