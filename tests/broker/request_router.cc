#include "tests/broker/request_router.h"

#include <algorithm>

#include "proxy/protocol/header.h"
#include "proxy/protocol/schema.h"
#include "tests/broker/log.h"

namespace pp::test_broker {

namespace {

// Response frame with the header version this broker's own table implies:
// v1 (tagged fields) for flexible versions, except ApiVersions, whose
// response header is always v0 so any client can read it (KIP-511).
template <Message M>
Bytes encode_response(std::int32_t correlation_id, std::int16_t version, const M& body) {
  Bytes out;
  WireWriter w(out);
  const std::size_t size_at = w.reserve_int32();
  w.int32(correlation_id);
  if (M::kApiKey != ApiKey::kApiVersions && version >= M::kFlexibleSince) w.uvarint(0);
  encode_body(w, body, version);
  w.patch_int32(size_at, static_cast<std::int32_t>(out.size() - 4));
  return out;
}

// The request header's tagged fields, when the shared registry does not
// describe the API yet and so could not tell decode_request_header about them.
Decoded<void> skip_tagged_fields(WireReader& r) {
  auto count = r.read_uvarint();
  if (!count) return std::unexpected(count.error());
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto tag = r.read_uvarint();
    if (!tag) return std::unexpected(tag.error());
    auto size = r.read_uvarint();
    if (!size) return std::unexpected(size.error());
    if (auto s = r.skip(*size); !s) return s;
  }
  return {};
}

RoutedRequest close_with(RoutedRequest r, std::string reason) {
  r.action = RoutedRequest::Action::kClose;
  r.close_reason = std::move(reason);
  return r;
}

template <Message M>
Decoded<M> decode_whole(WireReader& r, std::int16_t version) {
  auto m = decode_body<M>(r, version);
  if (!m) return m;
  if (!r.empty()) return r.fail(DecodeErrorKind::kTrailingBytes);
  return m;
}

}  // namespace

RoutedRequest route_request(ClusterState& cluster, BrokerId self, ByteView frame) {
  RoutedRequest out;
  WireReader r(frame);
  auto decoded = decode_request_header(r);
  if (!decoded) return close_with(std::move(out), "bad request header: " + decoded.error().describe());
  const RequestHeader& h = decoded->header;
  out.api = h.api_key;
  out.version = h.api_version;
  out.correlation_id = h.correlation_id;
  const BrokerInfo* me = cluster.broker(self);
  const bool legacy = me && me->legacy;

  const ServedApi* api = find_served_api(legacy, h.api_key);
  if (!api) {
    return close_with(std::move(out), "unsupported API " + std::to_string(static_cast<int>(h.api_key)) + " (" +
                                          std::string(api_name(h.api_key)) + ")");
  }
  if (!api->versions.contains(h.api_version)) {
    if (h.api_key == ApiKey::kApiVersions) {
      // KIP-511: answer in the v0 layout, listing what we speak.
      out.frame =
          encode_response(h.correlation_id, 0, handle_api_versions(cluster, self, ErrorCode::kUnsupportedVersion));
      return out;
    }
    return close_with(std::move(out),
                      std::string(api_name(h.api_key)) + " v" + std::to_string(h.api_version) + " is not supported");
  }
  if (!decoded->flexible_known && h.api_version >= api->flexible_since) {
    if (auto s = skip_tagged_fields(r); !s) {
      return close_with(std::move(out), "bad request header tags: " + s.error().describe());
    }
  }

  auto malformed = [&](const DecodeError& e) {
    return close_with(std::move(out), "malformed " + std::string(api_name(h.api_key)) + " v" +
                                          std::to_string(h.api_version) + " request: " + e.describe());
  };
  const std::int16_t v = h.api_version;
  const std::int32_t corr = h.correlation_id;
  switch (h.api_key) {
    case ApiKey::kApiVersions: {
      auto req = decode_whole<ApiVersionsRequest>(r, v);
      if (!req) return malformed(req.error());
      out.frame = encode_response(corr, v, handle_api_versions(cluster, self));
      return out;
    }
    case ApiKey::kMetadata: {
      auto req = decode_whole<MetadataRequest>(r, v);
      if (!req) return malformed(req.error());
      out.frame = encode_response(corr, v, handle_metadata(cluster, self, *req, v));
      return out;
    }
    case ApiKey::kInitProducerId: {
      auto req = decode_whole<InitProducerIdRequest>(r, v);
      if (!req) return malformed(req.error());
      out.frame = encode_response(corr, v, handle_init_producer_id(cluster, *req, v));
      return out;
    }
    case ApiKey::kProduce: {
      auto req = decode_whole<ProduceRequest>(r, v);
      if (!req) return malformed(req.error());
      ProduceResult result = handle_produce(cluster, self, *req, v);
      out.held = std::move(result.held);
      if (req->acks == 0) {
        // acks=0 is never answered; a failed one closes the connection, the
        // only way the client can notice (KafkaApis.handleProduceRequest).
        for (const auto& t : result.response.responses) {
          for (const auto& p : t.partition_responses) {
            if (p.error_code != ErrorCode::kNone) {
              release(out.held);
              out.held.clear();
              return close_with(std::move(out), "acks=0 Produce failed with " + std::string(error_name(p.error_code)));
            }
          }
        }
        out.action = RoutedRequest::Action::kNoResponse;
      } else {
        out.frame = encode_response(corr, v, result.response);
      }
      return out;
    }
    case ApiKey::kFetch: {
      auto req = decode_whole<FetchRequest>(r, v);
      if (!req) return malformed(req.error());
      FetchResult result = handle_fetch(cluster, self, *req, v);
      out.frame = encode_response(corr, v, result.response);
      if (result.record_bytes == 0 && !result.has_error && req->max_wait_ms > 0 && req->min_bytes > 0) {
        out.wait_ms =
            std::min<std::uint32_t>(static_cast<std::uint32_t>(req->max_wait_ms), cluster.options().max_fetch_wait_ms);
        out.recompute = [&cluster, self, request = std::move(*req), v, corr] {
          FetchResult later = handle_fetch(cluster, self, request, v);
          return encode_response(corr, v, later.response);
        };
      }
      return out;
    }
    case ApiKey::kListOffsets: {
      auto req = decode_whole<ListOffsetsRequest>(r, v);
      if (!req) return malformed(req.error());
      out.frame = encode_response(corr, v, handle_list_offsets(cluster, self, *req, v));
      return out;
    }
    default:
      return close_with(std::move(out), "unsupported API " + std::string(api_name(h.api_key)));
  }
}

}  // namespace pp::test_broker
